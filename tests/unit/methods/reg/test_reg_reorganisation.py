from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.methods.reg.candidates import path_entities
from graphrag_integrations.methods.reg.params import RegQueryParams
from graphrag_integrations.methods.reg.reorganisation import expand_chains, reorganise
from tests.unit.reg_fixtures import MOVIES, movie_index

INDEX = movie_index()
VIEW = INDEX.view
N = VIEW.n_triples


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.integers(0, N - 1), min_size=1),
    st.sets(st.sampled_from(sorted(VIEW.entity_row)), min_size=1, max_size=2),
    st.integers(1, 3),
    st.booleans(),
    st.booleans(),
)
def test_every_chain_is_a_connected_path_of_the_kg(
    rows: set[int], anchors: set[str], length: int, strict: bool, keep: bool
) -> None:
    anchor_rows = [VIEW.entity_row[a] for a in anchors]
    chains = expand_chains(
        VIEW,
        sorted(rows),
        [1.0] * len(rows),
        anchor_rows,
        max_length=length,
        strict_direction=strict,
        keep_prefixes=keep,
    )
    for src, path, _ in chains:
        assert src in anchor_rows and 1 <= len(path) <= length
        ents = path_entities(VIEW, src, path)  # raises if a step does not continue the chain
        assert len(set(ents)) == len(ents)  # no revisits
        assert all(r in rows for r, _ in path)
        # only the first triple touches... at least: the first triple is query-anchored
        assert src in (int(VIEW.heads[path[0][0]]), int(VIEW.tails[path[0][0]]))
        if strict:
            assert len({fwd for _, fwd in path}) == 1
        for row, _ in path[1:]:
            h, t = int(VIEW.heads[row]), int(VIEW.tails[row])
            assert h not in anchor_rows and t not in anchor_rows


def test_two_hop_chain_and_multi_answer_merging() -> None:
    rows = list(range(N))
    colman = VIEW.entity_row["Ronald Colman"]
    mixed = reorganise(VIEW, rows, [1.0] * N, [colman], RegQueryParams(max_length=2))
    texts = [c.render(VIEW) for c in mixed]
    assert (
        "Ronald Colman <- [starred_actors] <- Kismet; Random Harvest -> [directed_by] -> "
        "William Dieterle; Mervyn LeRoy" in texts
    )
    merged = next(c for c in mixed if "directed_by" in c.render(VIEW))
    assert {VIEW.entities[t] for t in merged.targets} == {"William Dieterle", "Mervyn LeRoy"}
    # the paper's strict chaining cannot leave an actor (always a tail) forwards
    strict = reorganise(
        VIEW, rows, [1.0] * N, [colman], RegQueryParams(max_length=2, strict_direction=True)
    )
    assert all(len(p) == 1 for c in strict for part in c.parts for p in part.paths)


def test_prefixes_dropped_unless_asked() -> None:
    colman = VIEW.entity_row["Ronald Colman"]
    rows = VIEW.triple_rows(
        [
            ("Kismet", "starred_actors", "Ronald Colman"),
            ("Kismet", "directed_by", "William Dieterle"),
        ]
    )
    short = expand_chains(VIEW, rows, [1.0, 0.5], [colman], max_length=2, strict_direction=False)
    assert [len(p) for _, p, _ in short] == [2]
    assert short[0][2] == 0.75  # mean of the triple scores
    full = expand_chains(
        VIEW, rows, [1.0, 0.5], [colman], max_length=2, strict_direction=False, keep_prefixes=True
    )
    assert sorted(len(p) for _, p, _ in full) == [1, 2]


def test_multi_entity_merging_intersects_targets() -> None:
    colman, dieterle = VIEW.entity_row["Ronald Colman"], VIEW.entity_row["William Dieterle"]
    rows = VIEW.triple_rows(t for t in MOVIES if t[1] in ("starred_actors", "directed_by"))
    chains = reorganise(
        VIEW, rows, [1.0] * len(rows), [colman, dieterle], RegQueryParams(max_length=1)
    )
    joint = [c for c in chains if len(c.parts) == 2]
    assert joint, [c.render(VIEW) for c in chains]
    assert [VIEW.entities[t] for t in joint[0].targets] == ["Kismet"]
    off = reorganise(
        VIEW,
        rows,
        [1.0] * len(rows),
        [colman, dieterle],
        RegQueryParams(max_length=1, multi_entity_merging=False),
    )
    assert all(len(c.parts) == 1 for c in off)
