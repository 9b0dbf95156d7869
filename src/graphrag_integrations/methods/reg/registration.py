"""ReG's method registrations: ``reg`` (scorers trained on LLM-refined supervision) and
``reg-weak`` (scorers trained on weak, shortest-path supervision), both over the triples and
questions of a KGQA dataset (MetaQA), plus the ``train --method reg`` trainer.

Importing this module is cheap: the builder imports the index on first call.

Examples
--------
>>> [r.name for r in REGISTRATIONS], sorted(REG.inputs)
(['reg', 'reg-weak'], ['questions', 'triples'])
>>> opts = REG.parse_options({"K": "50", "max_length": "3", "scorer": "none"})
>>> opts.query_params.K, opts.query_params.max_length, opts.objects["scorer"]
(50, 3, 'none')
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.registry import STORE_OBJECTS, MethodRegistration
from graphrag_integrations.methods.reg.params import RegIndexParams, RegQueryParams, RegTrainParams

if TYPE_CHECKING:
    from graphrag_integrations.methods.reg.kgqa import KGQARetriever

__all__ = ["REG", "REGISTRATIONS", "REG_WEAK", "RegBuilder", "build_reg", "build_reg_weak"]

logger = logging.getLogger(__name__)

#: Hop counts with a committed MetaQA scorer per supervision.
COMMITTED_HOPS = (1, 2, 3)
#: Supervisions with committed MetaQA scorers (``scorer=`` accepts these names).
SUPERVISIONS = ("weak", "refined", "oracle")


#: The builders' object options (strings on the command line).
OBJECTS = {
    "scorer": "'' = the committed MetaQA scorers of this registration (one per hop count); "
    "'weak', 'refined' or 'oracle' = the committed scorers of that supervision; a folder "
    "written by `train --method reg` (its scorer for every hop); 'none' = untrained",
    "index_cache": "folder of a persisted ReG index of the same triples (loaded if present, "
    "written after a build otherwise); '' = build in memory",
    "graph_store": STORE_OBJECTS["graph_store"],
}


def _scorers(spec: str, supervision: str) -> dict[int, Any]:
    from graphrag_integrations.methods.reg.assets import asset, load_scorer

    if spec == "none":
        return {}
    if spec in SUPERVISIONS:
        supervision, spec = spec, ""
    if spec:
        stems = sorted(Path(spec).glob("*.pt.gz"))
        if not stems:
            raise FileNotFoundError(f"{spec}: no trained ReG scorer (*.pt.gz)")
        out = {}
        for stem in stems:
            scorer, meta = load_scorer(str(stem)[: -len(".pt.gz")])
            out[int(meta["hops"])] = scorer
        return out
    out = {}
    for hops in COMMITTED_HOPS:
        stem = asset(supervision, hops)
        if Path(f"{stem}.pt.gz").is_file():
            out[hops] = load_scorer(stem)[0]
        else:
            logger.warning("no committed %s scorer for %d-hop questions", supervision, hops)
    return out


def _check_disjoint(spec: str, supervision: str, questions: Sequence[Any]) -> None:
    """Warn (and say how many) when evaluation questions were used to train the scorers."""
    import json

    from graphrag_integrations.methods.reg.assets import ASSETS

    if spec == "none":
        return
    if spec in SUPERVISIONS:
        supervision, spec = spec, ""
    folder = Path(spec) if spec else ASSETS
    pattern = "*.json" if spec else f"{supervision}-*hop.json"
    used: set[str] = set()
    for meta in folder.glob(pattern):
        data = json.loads(meta.read_text(encoding="utf-8"))
        used |= set(data.get("train_ids", [])) | set(data.get("validation_ids", []))
    overlap = sum(1 for q in questions if q.id in used)
    if overlap:
        logger.warning(
            "%d of %d evaluation questions were used to train the ReG scorers",
            overlap,
            len(questions),
        )


@dataclass(frozen=True)
class RegBuilder:
    """The evaluation builder of a ReG registration: ReG over ``triples`` with the scorers
    trained on ``supervision`` (``"refined"``: LLM-refined, ``"weak"``: shortest paths), or
    those ``scorer`` names (:data:`OBJECTS`).

    Examples
    --------
    >>> from graphrag_integrations.testing import FakeEmbedder
    >>> r = build_reg(FakeEmbedder(), triples=[("A", "r", "B")], questions=[], scorer="none")
    >>> r.retrieve("[A]")[0].text
    'A -> [r] -> B'
    """

    supervision: str

    def __call__(
        self,
        embedder: Any,
        *,
        triples: Sequence[tuple[str, str, str]],
        questions: Sequence[Any],
        index_params: RegIndexParams | None = None,
        query_params: RegQueryParams | None = None,
        show_progress: bool = False,
        scorer: str = "",
        index_cache: str | Path = "",
        graph_store: Any = None,
    ) -> KGQARetriever:
        """Build the index (or load it from ``index_cache``) and wrap it with its scorers."""
        from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
        from graphrag_integrations.methods.reg.kgqa import KGQARetriever

        common: dict[str, Any] = {
            "embedding": embedder,
            "index_params": index_params or RegIndexParams(),
            "query_params": query_params or RegQueryParams(),
            "show_progress": show_progress,
        }
        cache = Path(index_cache) if index_cache else None
        if cache is not None and (cache / "manifest.json").is_file():
            index = RefinedSubgraphRetriever.load(cache, graph_store=graph_store, **common)
            if index.store.n_triples != len(set(map(tuple, triples))):
                raise ValueError(f"{cache} holds another KG ({index.store.n_triples} triples)")
        else:
            index = RefinedSubgraphRetriever.from_triples(
                triples, doc_id="kb", graph_store=graph_store, **common
            )
            if cache is not None:
                index.persist(cache)
        scorers = _scorers(str(scorer), self.supervision)
        kgqa = KGQARetriever(index, scorers)
        kgqa.default_scorer = scorers.get(2) or next(iter(scorers.values()), None)
        _check_disjoint(str(scorer), self.supervision, questions)
        return kgqa


#: ReG over ``triples`` with the scorers trained on LLM-refined supervision.
build_reg = RegBuilder("refined")
#: ReG over ``triples`` with the scorers trained on weak (shortest-path) supervision.
build_reg_weak = RegBuilder("weak")


_COMMON: dict[str, Any] = {
    "index_class": "graphrag_integrations.methods.reg.index:RefinedSubgraphRetriever",
    "index_params": RegIndexParams,
    "query_params": RegQueryParams,
    "inputs": frozenset({"triples", "questions"}),
    "objects": OBJECTS,
    "named_objects": frozenset(OBJECTS),
    "trainer": "graphrag_integrations.evaluation.metaqa:train_reg",
    "train_params": RegTrainParams,
}

REG = MethodRegistration(
    name="reg",
    builder="graphrag_integrations.methods.reg.registration:build_reg",
    description="ReG: DDE+MLP triple scorer trained on LLM-refined supervision, evidence chains",
    **_COMMON,
)
REG_WEAK = MethodRegistration(
    name="reg-weak",
    builder="graphrag_integrations.methods.reg.registration:build_reg_weak",
    description="ReG ablation: the triple scorer trained on weak (shortest-path) supervision",
    **_COMMON,
)

#: What :mod:`graphrag_integrations.evaluation.registry` reads from this module.
REGISTRATIONS: tuple[MethodRegistration, ...] = (REG, REG_WEAK)
