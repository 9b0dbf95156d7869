from __future__ import annotations

from graphrag_integrations.methods.reg.candidates import (
    build_pool,
    ground,
    path_entities,
    relation_chain,
    shortest_paths,
)
from graphrag_integrations.methods.reg.params import RegIndexParams
from tests.unit.reg_fixtures import movie_index


def test_shortest_paths_keep_direction_and_parallel_relations() -> None:
    index = movie_index()
    # a parallel relation: Dieterle also wrote Juarez
    index.insert_triples([("Juarez", "written_by", "William Dieterle")], "extra")
    view = index.view
    davis, dieterle = view.entity_row["Bette Davis"], view.entity_row["William Dieterle"]
    paths, capped = shortest_paths(view, davis, dieterle, 3, 100)
    assert not capped
    chains = sorted(relation_chain(view, p) for p in paths)
    assert chains == [
        (("starred_actors", False), ("directed_by", True)),
        (("starred_actors", False), ("written_by", True)),
    ]
    for p in paths:
        ents = path_entities(view, davis, p)
        assert ents[0] == davis and ents[-1] == dieterle and len(ents) == 3
        # every step is a stored triple, walked along or against it
        for (row, fwd), a, b in zip(p, ents, ents[1:], strict=False):
            h, t = int(view.heads[row]), int(view.tails[row])
            assert (h, t) == ((a, b) if fwd else (b, a))
    assert shortest_paths(view, davis, dieterle, 3, 1) == (paths[:1], True)
    assert shortest_paths(view, davis, dieterle, 1, 100) == ([], False)


def test_pool_merging_and_answer_centric_fallback() -> None:
    index = movie_index()
    view = index.view
    # "the films starring Ronald Colman were released in which years": 1944 and 1942
    pool = build_pool(view, ["Ronald Colman"], ["1944", "1942"])
    assert {view.entities[a] for _, a in pool.sp_paths} == {"1944", "1942"}
    assert view.entities[pool.representative] == "1942"  # same distance and count: by name
    sp = [c for c in pool.candidates if c.kind == "sp"]
    assert len(sp) == 1 and sp[0].chain == (("starred_actors", False), ("release_year", True))
    # answer merging: only the representative's path is in the prompt
    assert (
        sp[0].render(view)
        == "Ronald Colman <- [starred_actors] <- Random Harvest -> [release_year] -> 1942"
    )
    # years have no outgoing triple: P_a falls back to incoming ones, minus the P_sp last step
    ans = [c for c in pool.candidates if c.kind == "answer"]
    assert ans == []  # 1942's only incoming triple is the P_sp last step
    query = [c for c in pool.candidates if c.kind == "query"]
    assert [c.chain for c in query] == [(("starred_actors", False),)]
    assert len(query[0].paths) == 2  # merged: Kismet and Random Harvest
    assert pool.stats.raw == 2 + 2 and pool.stats.merged == 2
    # grounding undoes answer merging: both years' paths become labels
    labels = {view.triple(r) for r in ground(view, pool, [0])}
    assert ("Kismet", "release_year", "1944") in labels
    assert ("Random Harvest", "release_year", "1942") in labels
    only_rep = {view.triple(r) for r in ground(view, pool, [0], all_answers=False)}
    assert ("Kismet", "release_year", "1944") not in only_rep
    assert set(pool.weak_triples()) == set(ground(view, pool, [0]))


def test_answer_centric_uses_attributes_first() -> None:
    index = movie_index()
    view = index.view
    pool = build_pool(view, ["William Dieterle"], ["Juarez"])
    ans = [c for c in pool.candidates if c.kind == "answer"]
    assert {c.chain[0][0] for c in ans} == {
        "directed_by",
        "starred_actors",
        "release_year",
        "written_by",
    }
    assert all(c.chain[0][1] for c in ans)  # outgoing triples of Juarez


def test_without_merging_every_path_is_a_candidate() -> None:
    index = movie_index()
    view = index.view
    off = RegIndexParams(answer_merging=False, relation_merging=False)
    pool = build_pool(view, ["Ronald Colman"], ["1944", "1942"], off)
    assert len([c for c in pool.candidates if c.kind == "sp"]) == 2
    assert len([c for c in pool.candidates if c.kind == "query"]) == 2
    assert pool.stats.merged == len(pool.candidates)


def test_missing_entities_give_an_empty_pool() -> None:
    view = movie_index().view
    pool = build_pool(view, ["Nobody"], ["1942"])
    assert pool.candidates == [] and pool.representative is None


def test_attribute_less_answer_in_neighbourhood_and_hub_answers() -> None:
    index = movie_index()
    view = index.view
    # Bette Davis -> her films' writers; John Huston (no outgoing triple) also answers
    pool = build_pool(view, ["Juarez"], ["Bette Davis"])
    ans = [c for c in pool.candidates if c.kind == "answer"]
    assert [c.render(view) for c in ans] == ["Bette Davis <- [starred_actors] <- Now Voyager"]
    # Drama is an answer with more incoming triples than the cap: a hub, no P_a
    hub = build_pool(view, ["Kismet"], ["Drama"], RegIndexParams(neighbourhood_cap=1))
    assert hub.stats.hub_answer and not [c for c in hub.candidates if c.kind == "answer"]
    small = build_pool(view, ["Kismet"], ["Drama"], RegIndexParams(neighbourhood_cap=5))
    assert not small.stats.hub_answer
    assert len([c for c in small.candidates if c.kind == "answer"]) == 1  # merged: 2 films
