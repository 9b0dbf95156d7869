"""QueryCentricGraphIndex: build, lifecycle (insert / delete == rebuild), persistence."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyQueryError, IndexMismatchError, IndexNotFoundError
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.qcg.params import QCGIndexParams, QCGQueryParams
from graphrag_integrations.methods.qcg.prompts import QAPair
from graphrag_integrations.methods.qcg.query_set import QuerySet, chunk_key
from tests.conftest import FakeEmbedder

CORPUS = [
    (
        "forest",
        "Nottingham Forest won the European Cup in 1979. The club is based in Nottingham. "
        "Forest won the FA Cup in 1898 and 1959.",
    ),
    ("cup", "The European Cup was organised by UEFA. Real Madrid won the first five editions."),
    ("chelsea", "Chelsea won the FA Cup in 1970. Chelsea is based in London."),
    ("clough", "Brian Clough managed Nottingham Forest. He was born in Middlesbrough."),
    ("boro", "Middlesbrough is a town in North Yorkshire. It has two rivers."),
    ("paris", "Paris is the capital of France. The Eiffel Tower stands in Paris."),
]
QUESTIONS = [
    "Where was the manager of Nottingham Forest born?",
    "When did Chelsea win the FA Cup?",
    "What is the capital of France?",
    "Who won the first editions of the European Cup?",
]


def chunk_of(prompt: str) -> str:
    return prompt.rsplit("---Input chunk---\n", 1)[1].strip()


def pairs_for(chunk: str) -> list[dict[str, Any]]:
    """Deterministic 'generated' pairs: one question per sentence, answered by the sentence."""
    sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", chunk) if s.strip()]
    out = []
    for i, s in enumerate(sentences):
        words = s.rstrip(".").split()
        out.append({"index": 2 * i, "query": f"What about {' '.join(words[:2])}?", "answer": s})
        out.append({"index": 2 * i + 1, "query": f"Which fact mentions {words[-1]}", "answer": s})
    return out


class FakeLLM:
    """Canned Doc2Query replies computed from the chunk in the prompt; counts calls."""

    model_name = "fake-doc2query"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            self.calls.append(chunk_of(prompt))
        return json.dumps(pairs_for(chunk_of(prompt)))


def documents(items: list[tuple[str, str]] = CORPUS) -> list[SourceDocument]:
    return [SourceDocument(text=text, id=doc_id) for doc_id, text in items]


def qcg_params(preset: str | None = None, **options: Any) -> dict[str, Any]:
    """``index_params`` / ``query_params`` from a preset and field values of either class."""
    chosen = {"preset": preset} if preset else {}
    index_names = {s.name for s in QCGIndexParams.specs()}
    index = {k: v for k, v in options.items() if k in index_names}
    query = {k: v for k, v in options.items() if k not in index_names}
    return {
        "index_params": QCGIndexParams.from_options({**chosen, **index}),
        "query_params": QCGQueryParams.from_options({**chosen, **query}),
    }


def build(
    items: list[tuple[str, str]] = CORPUS,
    *,
    llm: Any = None,
    query_set: Any = None,
    cache_dir: Any = None,
    preset: str | None = None,
    **options: Any,
) -> QueryCentricGraphIndex:
    """A QCG index over ``items``; ``options`` are fields of either params class."""
    return QueryCentricGraphIndex.from_documents(
        documents(items),
        embedding=FakeEmbedder(),
        llm=FakeLLM() if llm is None else llm,
        query_set=query_set,
        cache_dir=cache_dir,
        **qcg_params(preset, **options),
    )


def answers(index: QueryCentricGraphIndex, **kw: Any) -> list[list[tuple[str, float]]]:
    return [[(h.id, round(h.score, 5)) for h in index.retrieve(q, k=4)] for q in QUESTIONS]


def state(index: QueryCentricGraphIndex) -> tuple[Any, ...]:
    return (index.store.query_ids(), index.store.knn(), answers(index))


@pytest.fixture(scope="module")
def index() -> QueryCentricGraphIndex:
    return build()


@pytest.fixture(scope="module")
def paper_index() -> QueryCentricGraphIndex:
    """The paper's retrieval (query nodes only) over the same graph."""
    return build(preset="paper")


def test_build_filters_each_chunk_to_top_alpha(index: QueryCentricGraphIndex) -> None:
    for p in index.passages:
        generated = index.store.generated_pairs(p.id)
        kept = [q for q in index.store.query_ids() if index.store.chunk_of(q) == p.id]
        assert len(kept) == max(1, -(-len(generated) * 8 // 10))  # ceil(0.8 * pairs)
        scores = sorted(index.store.query(q)["score"] for q in kept)
        kept_idx = {index.store.query(q)["index"] for q in kept}
        dropped = [i for i in range(len(generated)) if i not in kept_idx]
        if dropped:  # every dropped pair scores no higher than the worst kept one
            emb = FakeEmbedder()
            chunk_vec = emb.embed([p.text])[0]
            for i in dropped:
                cos = float(emb.embed([generated[i].text()])[0] @ chunk_vec)
                assert cos <= scores[0] + 1e-6


def test_query_ids_follow_the_paper_and_knn_has_k_out_edges(index: QueryCentricGraphIndex) -> None:
    ids = index.store.query_ids()
    assert all(re.fullmatch(r".+-\d+", q) for q in ids)
    knn = index.store.knn()
    assert all(len(v) == 3 and q not in v for q, v in knn.items())
    assert index.graph_store.number_of_edges("similar") == 3 * len(ids)
    assert index.graph_store.number_of_edges("from_chunk") == len(ids)


def test_retrieve_explains_matched_queries_with_hops(paper_index: QueryCentricGraphIndex) -> None:
    index = paper_index
    hits = index.retrieve("What is the capital of France?", k=3)
    assert hits[0].doc_id == "paris"
    json.dumps([h.explanation for h in hits])  # JSON-serialisable
    for hit in hits:
        queries = hit.explanation["queries"]
        assert queries and {"id", "query", "answer", "hop", "s"} <= set(queries[0])
        mean_s = sum(q["s"] for q in queries) / len(queries)
        assert hit.score == pytest.approx(mean_s, abs=1e-5)
        assert all(index.store.chunk_of(q["id"]) == hit.id for q in queries)
    hops = {
        q["hop"] for h in index.retrieve("Nottingham Forest", k=6) for q in h.explanation["queries"]
    }
    assert hops == {0, 1}


def test_hop_zero_uses_only_retrieved_queries() -> None:
    idx = build(h=0, n=2)
    hits = idx.retrieve("What is the capital of France?", k=6)
    queries = [q for h in hits for q in h.explanation["queries"]]
    assert len(queries) == 2 and all(q["hop"] == 0 for q in queries)


def test_k_is_honoured_and_empty_query_rejected(index: QueryCentricGraphIndex) -> None:
    assert len(index.retrieve("Nottingham Forest FA Cup", k=2)) == 2
    assert len(index.retrieve("Nottingham Forest FA Cup")) <= index.default_k == 5
    with pytest.raises(EmptyQueryError):
        index.retrieve("   ")


def test_insert_then_delete_equals_rebuild_without() -> None:
    base = build(CORPUS[:-1])
    grown = build(CORPUS[:-1])
    assert grown.insert(documents(CORPUS[-1:])) == ["paris"]
    assert state(grown) != state(base)
    assert state(grown) == state(build())  # insert == build with the document
    assert grown.delete("paris") is True
    assert state(grown) == state(base)


def test_delete_middle_document_repairs_knn_like_a_rebuild() -> None:
    full = build()
    before = full.store.knn()
    cup_chunks = {p.id for p in full.passages if p.doc_id == "cup"}
    cup_queries = {q for q in before if full.store.chunk_of(q) in cup_chunks}
    # the repair is exercised: surviving queries had neighbours in the deleted document
    assert any(set(v) & cup_queries for q, v in before.items() if q not in cup_queries)
    assert full.delete("cup") is True
    without = build([c for c in CORPUS if c[0] != "cup"])
    assert state(full) == state(without)
    assert all(len(v) == 3 for v in full.store.knn().values())


def test_delete_unknown_document_returns_false(caplog: pytest.LogCaptureFixture) -> None:
    idx = build(CORPUS[:2])
    assert idx.delete("nope") is False
    assert "no such document" in caplog.text


def test_from_framework_documents() -> None:
    from langchain_core.documents import Document
    from llama_index.core import Document as LlamaDocument

    lc = [Document(page_content=t, metadata={"source": d}) for d, t in CORPUS[:3]]
    li = [LlamaDocument(text=t, id_=d) for d, t in CORPUS[:3]]
    for docs in (lc, li, [t for _, t in CORPUS[:3]]):
        idx = QueryCentricGraphIndex.from_documents(docs, embedding=FakeEmbedder(), llm=FakeLLM())
        assert len(idx.passages) == 3
        assert idx.retrieve("When did Chelsea win the FA Cup?", k=1)[0].text == CORPUS[2][1]


def test_persist_load_roundtrip(index: QueryCentricGraphIndex, tmp_path: Path) -> None:
    index.persist(tmp_path / "ix")
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    from graphrag_integrations.core.llm import LLMClient

    assert manifest["models"]["generator"] == LLMClient(FakeLLM()).model_name
    assert len(manifest["parameters"]["prompt_hash"]) == 16
    loaded = QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert state(loaded) == state(index)
    assert loaded.export_query_set().pairs == index.export_query_set().pairs
    with pytest.raises(IndexMismatchError):
        QueryCentricGraphIndex.load(
            tmp_path / "ix", embedding=FakeEmbedder(), index_params=QCGIndexParams(k_neighbors=2)
        )
    with pytest.raises(IndexMismatchError):
        QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder(model_name="other"))
    with pytest.raises(IndexNotFoundError):
        QueryCentricGraphIndex.load(tmp_path / "missing", embedding=FakeEmbedder())
    h0 = QCGQueryParams(h=0)
    loaded = QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder(), query_params=h0)
    assert loaded.query_params.h == 0


def test_loaded_index_accepts_inserts_and_deletes(
    index: QueryCentricGraphIndex, tmp_path: Path
) -> None:
    build(CORPUS[:-1]).persist(tmp_path / "ix")
    loaded = QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder(), llm=FakeLLM())
    loaded.insert(documents(CORPUS[-1:]))
    assert state(loaded) == state(index)


def test_query_set_is_reused_without_llm(index: QueryCentricGraphIndex, tmp_path: Path) -> None:
    qs = index.export_query_set()
    qs.save(tmp_path / "qs.jsonl.gz")

    def no_llm(prompt: str) -> str:
        raise AssertionError("the LLM must not be called")

    again = build(llm=no_llm, query_set=tmp_path / "qs.jsonl.gz")
    assert state(again) == state(index)
    assert again.generation_report()["reused_chunks"] == len(CORPUS)


def test_building_twice_with_a_cache_never_calls_the_llm_twice(tmp_path: Path) -> None:
    first, second = FakeLLM(), FakeLLM()
    a = build(llm=first, cache_dir=tmp_path / "cache")
    b = build(llm=second, cache_dir=tmp_path / "cache")
    assert sorted(first.calls) == sorted(t for _, t in CORPUS)
    assert second.calls == []
    assert state(a) == state(b)


def test_a_crash_mid_corpus_only_pays_for_the_rest(tmp_path: Path) -> None:
    from graphrag_integrations.core.llm import LLMClient

    class Flaky(FakeLLM):
        crash = True

        def __call__(self, prompt: str) -> str:
            if self.crash and "Chelsea" in prompt:
                raise RuntimeError("model crashed")
            return super().__call__(prompt)

    llm = Flaky()
    client = LLMClient(llm, cache_dir=tmp_path / "c", max_concurrency=1, max_retries=0)
    with pytest.raises(RuntimeError, match="model crashed"):
        build(llm=client)
    paid = set(llm.calls)
    assert paid and CORPUS[2][1] not in paid
    llm.crash, llm.calls = False, []
    build(llm=LLMClient(llm, cache_dir=tmp_path / "c", max_concurrency=1))
    assert set(llm.calls) == {t for _, t in CORPUS} - paid
    assert len(llm.calls) == len(set(llm.calls))


def test_concurrency_limit_is_respected() -> None:
    import time

    from graphrag_integrations.core.llm import LLMClient

    active = peak = 0
    lock = threading.Lock()
    inner = FakeLLM()

    def slow(prompt: str) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return inner(prompt)

    build(llm=LLMClient(slow, max_concurrency=2))
    assert peak == 2


def test_generation_report_counts_tokens_and_parses(index: QueryCentricGraphIndex) -> None:
    report = index.generation_report()
    assert report["generated_chunks"] == len(CORPUS)
    assert report["stats"]["json_replies"] == len(CORPUS) and report["stats"]["failed"] == 0
    assert report["usage"]["calls"] == len(CORPUS) and report["usage"]["total_tokens"] > 0


def test_chunk_without_pairs_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    idx = build(CORPUS[:2], llm=lambda prompt: "I cannot do that.", preset="paper")
    assert idx.generation_report()["empty_chunks"] == 2
    assert idx.generation_report()["stats"]["retried"] == 2
    assert idx.retrieve("European Cup") == []
    assert "only chunk_candidates > 0 can retrieve" in caplog.text


@pytest.mark.parametrize("preset", ["fused", "fused-hybrid"])
def test_chunk_candidates_answer_when_no_chunk_has_a_query(preset: str) -> None:
    idx = build(CORPUS[:3], llm=lambda prompt: "I cannot do that.", preset=preset)
    assert len(idx.graph) == 0
    hits = idx.retrieve("Who won the European Cup in 1979?", k=2)
    assert len(hits) == 2 and hits[0].passage.doc_id == "forest"
    assert all(h.explanation["queries"] == [] for h in hits)


def test_node_text_ablation_changes_the_embedded_text() -> None:
    q_only = build(CORPUS[:3], node_text="query")
    both = build(CORPUS[:3])
    emb = FakeEmbedder()
    qid = q_only.store.query_ids()[0]
    node = q_only.store.query(qid)
    vec = q_only.store.query_vectors([qid])[0]
    assert vec == pytest.approx(emb.embed([node["query"]])[0])
    assert both.store.query_vectors([qid])[0] == pytest.approx(
        emb.embed([f"{node['query']} {node['answer']}"])[0]
    )


def test_presets_and_unknown_parameters() -> None:
    idx = QueryCentricGraphIndex(embedding=FakeEmbedder(), preset="lihuaworld")
    assert (idx.index_params.k_neighbors, idx.query_params.n, idx.query_params.gamma) == (
        2,
        10,
        1.5,
    )
    with pytest.raises(TypeError):
        QueryCentricGraphIndex(embedding=FakeEmbedder(), beta=3)
    with pytest.raises(ValueError):
        QueryCentricGraphIndex(embedding=FakeEmbedder(), preset="nope")


def test_chunk_weight_fuses_the_chunk_cosine() -> None:
    # the paper's retrieval with only the chunk weight added (no chunk candidates)
    plain = build(CORPUS[:4], preset="paper")
    fused = build(CORPUS[:4], preset="paper", chunk_weight=0.5)
    q = "Where was the manager of Nottingham Forest born?"
    b = fused.retrieve(q, k=4)
    assert {h.id for h in b} <= {h.id for h in plain.retrieve(q, k=len(CORPUS))}
    emb = FakeEmbedder()
    qv = emb.embed_query(q)
    for hit in b:
        own = float(emb.embed([hit.text])[0] @ qv) + 1.0
        assert hit.score == pytest.approx(
            0.5 * hit.explanation["mean_query_s"] + 0.5 * own, abs=1e-5
        )


def test_chunk_candidates_reach_a_chunk_without_generated_queries() -> None:
    texts = [t for _, t in CORPUS[:4]]
    sets = QuerySet({}, model="fake", prompt_hash="0" * 16, M=2)
    sets.update(
        (t, [QAPair("What about Chelsea?", "FA Cup 1970")] if "Chelsea" in t else []) for t in texts
    )
    docs = [SourceDocument(t, d) for d, t in CORPUS[:4]]
    idx = QueryCentricGraphIndex.from_documents(
        docs, embedding=FakeEmbedder(), query_set=sets, preset="paper"
    )
    q = "Who managed Nottingham Forest?"
    reached = {h.passage.doc_id for h in idx.retrieve(q, k=4)}
    assert reached == {"chelsea"}  # the only chunk with a query node
    for chosen in ("fused", None):  # None: the defaults (fused-hybrid)
        fused = QueryCentricGraphIndex.from_documents(
            docs, embedding=FakeEmbedder(), query_set=sets, preset=chosen
        )
        assert fused.query_params.chunk_candidates == 10 and fused.query_params.chunk_weight == 0.3
        assert {h.passage.doc_id for h in fused.retrieve(q, k=4)} == {d for d, _ in CORPUS[:4]}


def test_framework_surface() -> None:
    idx = build(CORPUS[:3])
    docs = idx.as_langchain_retriever(k=2).invoke("When did Chelsea win the FA Cup?")
    assert len(docs) == 2 and docs[0].metadata["explanation"]["method"] == "qcg"
    nodes = idx.as_llama_index_retriever(similarity_top_k=1).retrieve("Chelsea FA Cup")
    assert len(nodes) == 1
    tool = idx.as_langchain_tool("qcg_search", "Search the football notes.")
    assert "Chelsea" in str(tool.invoke({"query": "When did Chelsea win the FA Cup?"}))


def test_query_set_file_roundtrip(tmp_path: Path) -> None:
    qs = QuerySet({chunk_key("x"): [QAPair("q?", "a")]}, model="m", prompt_hash="h", M=3)
    qs.save(tmp_path / "s.jsonl.gz")
    loaded = QuerySet.load(tmp_path / "s.jsonl.gz")
    assert (loaded.model, loaded.M, loaded.get("x"), loaded.get("y")) == (
        "m",
        3,
        [QAPair("q?", "a")],
        None,
    )
    (tmp_path / "bad.gz").write_bytes(b"nope")
    with pytest.raises(IndexMismatchError):
        QuerySet.load(tmp_path / "bad.gz")


from langchain_tests.integration_tests import RetrieversIntegrationTests  # noqa: E402


class TestQCGLangChainStandard(RetrieversIntegrationTests):
    """langchain-tests standard retriever suite through ``as_langchain_retriever``."""

    @property
    def retriever_constructor(self) -> Any:
        return build().as_langchain_retriever

    @property
    def retriever_query_example(self) -> str:
        return "When did Chelsea win the FA Cup?"


def test_registration_builds_with_presets_and_reuses_a_query_set(tmp_path: Path) -> None:
    from graphrag_integrations.core.types import Passage
    from graphrag_integrations.evaluation.registry import get_registration

    reg = get_registration("qcg")
    passages = [Passage(f"p{i}", text, doc) for i, (doc, text) in enumerate(CORPUS)]
    llm = FakeLLM()
    retriever = reg.build(
        FakeEmbedder(),
        {"passages": passages},
        {"preset": "lihuaworld", "h": "2", "llm": llm, "query_set": "none"},
    )
    assert isinstance(retriever, QueryCentricGraphIndex)
    assert (retriever.index_params.k_neighbors, retriever.query_params.h) == (2, 2)
    assert (retriever.query_params.n, retriever.query_params.gamma) == (10, 1.5)
    assert retriever.retrieve("When did Chelsea win the FA Cup?", k=1)[0].id == "p2"
    calls = len(llm.calls)
    path = tmp_path / "qs.jsonl.gz"
    retriever.export_query_set().save(path)
    again = reg.build(FakeEmbedder(), {"passages": passages}, {"llm": llm, "query_set": str(path)})
    assert len(llm.calls) == calls  # every chunk came from the query set
    # no template given: the one whose hash the query set records (here the paper's)
    assert again.manifest().parameters["prompt_hash"] == retriever.export_query_set().prompt_hash
    assert again.generation_report()["reused_chunks"] == len(passages)


def test_missing_skip_indexes_uncovered_chunks_without_queries(tmp_path: Path) -> None:
    covered = build(CORPUS[:3])
    path = tmp_path / "qs.jsonl.gz"
    covered.export_query_set().save(path)
    llm = FakeLLM()
    index = build(CORPUS, llm=llm, query_set=path, missing="skip")
    assert llm.calls == []
    report = index.generation_report()
    assert report["skipped_chunks"] == len(CORPUS) - 3 == report["empty_chunks"]
    assert len(index.passages) == len(CORPUS)
    assert {index.store.chunk_of(q) for q in index.store.query_ids()} == {
        p.id for p in covered.passages
    }


@pytest.mark.slow
def test_example_query_set_with_minilm() -> None:
    """The shipped SmolLM2 query set over the shipped LiHuaWorld chunks, all-MiniLM-L6-v2."""
    root = Path(__file__).resolve().parents[4] / "examples" / "data"
    chunks = json.loads((root / "qcg_lihua_chunks.json").read_text(encoding="utf-8"))["chunks"]
    from graphrag_integrations.core.types import Passage

    passages = [Passage(c["id"], c["text"], c["doc_id"]) for c in chunks]
    qs = QuerySet.load(root / "qcg_lihua_queries.jsonl.gz")
    assert qs.model == "SmolLM2-135M-Instruct" and all(qs.get(p.text) is not None for p in passages)

    def no_llm(prompt: str) -> str:
        raise AssertionError("the query set covers every chunk")

    index = QueryCentricGraphIndex.from_passages(
        passages, query_set=qs, llm=no_llm, **qcg_params("lihuaworld", gamma=1.0)
    )
    hits = index.retrieve("What fitness challenge did Jennifer Moore propose?", k=2)
    assert hits[0].id == "20261129_19:00-0"
    assert "pull-ups" in hits[0].explanation["queries"][0]["answer"]


def test_default_query_set_merges_the_committed_files_and_refuses_mixed_generators(
    tmp_path: Path,
) -> None:
    from graphrag_integrations.methods.qcg.registration import QUERY_SET_DIR, default_query_set

    assert default_query_set(tmp_path) is None
    a = QuerySet({chunk_key("x"): [QAPair("q1?", "a1")]}, model="m", prompt_hash="h", M=3)
    b = QuerySet({chunk_key("y"): [QAPair("q2?", "a2")]}, model="m", prompt_hash="h", M=5)
    a.save(tmp_path / "a.jsonl.gz")
    b.save(tmp_path / "b.jsonl.gz")
    merged = default_query_set(tmp_path)
    assert merged is not None and merged.get("y") == [QAPair("q2?", "a2")]
    assert (len(merged), merged.M, merged.extra["files"]) == (2, 5, ["a.jsonl.gz", "b.jsonl.gz"])
    QuerySet({}, model="other", prompt_hash="h", M=1).save(tmp_path / "c.jsonl.gz")
    with pytest.raises(ValueError, match="generated by other"):
        default_query_set(tmp_path)
    shipped = default_query_set(QUERY_SET_DIR)  # the committed HotpotQA-100 set is found
    assert shipped is not None and shipped.model == "SmolLM2-135M-Instruct[bfloat16]"


def test_answerless_questions_are_dropped_by_default_and_kept_as_query_nodes_on_request(
    tmp_path: Path,
) -> None:
    chunks = {text: pairs_for(text) for _, text in CORPUS}
    qs = QuerySet({}, model="fake", prompt_hash="0" * 16, M=20)
    qs.update(
        (text, [QAPair(p["query"], p["answer"]) for p in pairs] + [QAPair(f"Why {i}?", "")])
        for i, (text, pairs) in enumerate(chunks.items())
    )
    plain = QuerySet({}, model="fake", prompt_hash="0" * 16, M=20)
    plain.update((t, [QAPair(p["query"], p["answer"]) for p in ps]) for t, ps in chunks.items())
    dropped = build(llm=FakeLLM(), query_set=qs)
    paper = build(llm=FakeLLM(), query_set=plain)
    # the paper's setting ignores them: the same graph and answers as without them
    assert sorted(dropped.store.query_ids()) == sorted(paper.store.query_ids())
    assert answers(dropped) == answers(paper)
    assert dropped.export_query_set().pairs == qs.pairs  # still exported with the index

    kept = build(llm=FakeLLM(), query_set=qs, answerless="keep", alpha=1.0)
    every = build(llm=FakeLLM(), query_set=plain, alpha=1.0)
    extra = set(kept.store.query_ids()) - set(every.store.query_ids())
    assert set(every.store.query_ids()) <= set(kept.store.query_ids())
    assert len(extra) == len(CORPUS)
    for qid in extra:
        node = kept.store.query(qid)
        assert node["answer"] == "" and node["query"].startswith("Why ")
    kept.persist(tmp_path / "ix")
    again = QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert again.index_params.answerless == "keep" and answers(again) == answers(kept)
    with pytest.raises(IndexMismatchError, match="answerless"):
        QueryCentricGraphIndex.load(
            tmp_path / "ix", embedding=FakeEmbedder(), index_params=QCGIndexParams()
        )


def test_a_persisted_index_carries_its_query_set_and_eval_reuses_it(tmp_path: Path) -> None:
    from graphrag_integrations.methods.qcg.registration import build as eval_build

    first = FakeLLM()
    idx = build(llm=first)
    assert len(first.calls) == len(CORPUS)
    idx.persist(tmp_path / "ix")
    qs = QuerySet.load(tmp_path / "ix")  # the folder: its query_set.jsonl.gz
    assert qs.pairs == idx.export_query_set().pairs and len(qs) == len(CORPUS)
    QueryCentricGraphIndex.load(tmp_path / "ix", embedding=FakeEmbedder())  # checksums hold
    second = FakeLLM()
    passages = list(idx.passages)
    again = eval_build(
        FakeEmbedder(), passages=passages, llm=second, query_set=str(tmp_path / "ix")
    )
    assert second.calls == []  # every chunk came from the index's query set
    assert again.generation_report()["reused_chunks"] == len(CORPUS)
    for q in QUESTIONS:
        assert [h.id for h in again.retrieve(q, k=3)] == [h.id for h in idx.retrieve(q, k=3)]
    with pytest.raises(IndexMismatchError):
        QuerySet.load(tmp_path)  # a folder without a query set


def test_passages_of_documents_reads_the_chunks_of_those_documents(
    index: QueryCentricGraphIndex,
) -> None:
    doc = index.passages[0].doc_id
    assert index.passages_of_documents([doc]) == [p for p in index.passages if p.doc_id == doc]
    # chunk ids not of the form <doc>#<n> (from_passages): found by reading every chunk
    odd = [Passage("x1", "Paris is the capital of France.", "a"), Passage("x2", "Rome.", "b")]
    built = QueryCentricGraphIndex.from_passages(odd, embedding=FakeEmbedder(), llm=FakeLLM())
    assert built.passages_of_documents(["a"]) == [odd[0]]
