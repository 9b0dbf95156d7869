from __future__ import annotations

import numpy as np
import pytest

from graphrag_integrations.methods.reg.params import RegIndexParams, RegTrainParams
from graphrag_integrations.methods.reg.scorer import TripleScorer, features, untrained_scores
from graphrag_integrations.methods.reg.subgraph import extract_subgraph
from graphrag_integrations.methods.reg.training import Example, train_scorer, triple_recall
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import movie_index


def _example(anchor: str, relation: str, query: str) -> Example:
    index = movie_index()
    view = index.view
    sub = extract_subgraph(view, [view.entity_row[anchor]], hops=2, max_degree=50, max_triples=99)
    feats = features(view, sub, FakeEmbedder().embed([query])[0], RegIndexParams())
    pos = [i for i, r in enumerate(sub.rows) if view.triple(int(r))[1] == relation]
    return Example(anchor, feats, np.array(pos, dtype=np.int64))


def test_recall_saturation_ties_go_to_the_lowest_validation_loss() -> None:
    ex = [_example("Kismet", "directed_by", "who directed kismet")]
    params = RegTrainParams(epochs=6, lr=1e-2, recall_k=1000, hidden=16)
    _, report = train_scorer(ex, ex, params)
    assert all(h["val_recall"] == 1.0 for h in report.history)
    losses = [h["val_loss"] for h in report.history]
    assert report.best_epoch == int(np.argmin(losses))


def test_scorer_round_trip_and_untrained_order() -> None:
    ex = _example("Ronald Colman", "directed_by", "directed")
    scorer = TripleScorer(int(ex.feats.query.shape[0]), int(ex.feats.dde.shape[1]), 8)
    again = TripleScorer.from_bytes(scorer.to_bytes(), **scorer.config())
    np.testing.assert_allclose(scorer.score(ex.feats), again.score(ex.feats))
    zero_shot = untrained_scores(ex.feats)
    assert zero_shot.shape == (ex.feats.heads.shape[0],)
    with pytest.raises(ValueError):
        triple_recall(zero_shot, np.array([], dtype=np.int64), 3)


def test_training_is_reproducible_per_seed() -> None:
    ex = [
        _example("Kismet", "directed_by", "who directed kismet"),
        _example("Ronald Colman", "starred_actors", "films with ronald colman"),
    ]
    params = RegTrainParams(epochs=3, lr=1e-2, hidden=16)
    runs = [train_scorer(ex, ex, params)[0] for _ in range(2)]
    assert runs[0].to_bytes() == runs[1].to_bytes()
    other, _ = train_scorer(ex, ex, RegTrainParams(epochs=3, seed=7, hidden=16))
    assert other.to_bytes() != runs[0].to_bytes()
