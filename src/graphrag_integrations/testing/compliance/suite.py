"""The suite class: :class:`IndexComplianceTests`, composed of one mixin per area.

Each area's cases live in a module of this package (:mod:`.inputs`, :mod:`.insert_delete`,
:mod:`.checkpoint`, :mod:`.persistence`, :mod:`.chunking`, :mod:`.queries`,
:mod:`.api_contract`, :mod:`.concurrency`, :mod:`.frameworks`, :mod:`.chroma_layers`,
:mod:`.filters`, :mod:`.query_bound`, :mod:`.boundary`), as a mixin of
:class:`~.base.ComplianceBase`. A new area is one more module of this package (importing
:mod:`.base` and :mod:`.corpus`, never this module or the package itself) and one more line
in the bases below.
"""

from __future__ import annotations

from langchain_tests.integration_tests import RetrieversIntegrationTests

from graphrag_integrations.testing.compliance.api_contract import ApiContractCases
from graphrag_integrations.testing.compliance.boundary import FilterBoundaryCases
from graphrag_integrations.testing.compliance.checkpoint import CheckpointCases
from graphrag_integrations.testing.compliance.chroma_layers import ChromaLayerCases
from graphrag_integrations.testing.compliance.chunking import ChunkingCases
from graphrag_integrations.testing.compliance.concurrency import ConcurrencyCases
from graphrag_integrations.testing.compliance.filters import FilterCases
from graphrag_integrations.testing.compliance.frameworks import FrameworkCases
from graphrag_integrations.testing.compliance.inputs import InputCases
from graphrag_integrations.testing.compliance.insert_delete import InsertDeleteCases
from graphrag_integrations.testing.compliance.persistence import PersistenceCases
from graphrag_integrations.testing.compliance.queries import QueryCases
from graphrag_integrations.testing.compliance.query_bound import QueryBoundCases

__all__ = ["IndexComplianceTests"]


class IndexComplianceTests(
    InputCases,
    InsertDeleteCases,
    CheckpointCases,
    PersistenceCases,
    ChunkingCases,
    QueryCases,
    QueryBoundCases,
    ApiContractCases,
    ConcurrencyCases,
    FrameworkCases,
    ChromaLayerCases,
    FilterCases,
    FilterBoundaryCases,
    RetrieversIntegrationTests,
):
    """Base class of a method's compliance tests (subclass it in the method's test module).

    A subclass sets :attr:`index_class`. It overrides :meth:`build_index` and
    :meth:`load_index` when the index is not built by ``index_class.from_documents(documents,
    embedding=embedder)`` or loaded by ``index_class.load(path, embedding=embedder)``, and
    :meth:`make_embedder` to test with another embedder (default: a fresh
    :class:`~graphrag_integrations.testing.fake_embedder.FakeEmbedder`).

    The cases check the rules of :mod:`graphrag_integrations.core.index.base`:

    * ``from_documents`` from strings, LangChain and LlamaIndex documents (ids and metadata
      kept, the targeted document ranked first);
    * ``insert`` returns the ids added and makes them retrievable; a document already indexed
      is skipped; ``insert`` then ``delete`` answers exactly as a fresh build without it;
    * ``delete`` returns ``True``, then ``False`` with a warning for the same (now unknown) id,
      and an unknown id changes nothing;
    * ``persist`` / ``load`` round trip answers with the same passages and scores;
    * data safety (:mod:`~graphrag_integrations.core.persistence`): ``persist`` into a folder
      of foreign files is refused and changes nothing, ``overwrite=True`` writes the index and
      keeps them; ``persist`` over another method's index is refused; every file listed in
      the manifest's checksums, emptied, with a flipped byte or with edited text, makes
      ``load`` raise ``CorruptIndexError`` naming it; an embedder with the recorded model
      name but another dimension fails at ``load``; stale temporary siblings are cleaned;
      ``persist`` over another index of the same method (another ``index_id``, or one
      recorded without an id) is refused and changes nothing unless ``overwrite=True``, while
      the same index (after ``insert``, or loaded from that folder) persists again into its
      folder; build ``timings`` come back from ``load`` (``nan`` when not recorded);
    * ``from_documents`` and ``insert`` take ``errors="skip"`` (and ``report=``): an
      undecodable file in a folder is left out and reported, the others indexed; a ``str``
      naming a folder or file (or shaped like a file path) is refused with a one-line
      ``DocumentLoadError`` naming ``Path(...)``, never indexed as text;
    * chunking and document management: a document longer than the method's
      ``chunk_size`` is cut by its default splitter (hits are chunks, ids ``"<doc_id>#<i>"``,
      ``delete(doc_id)`` removes every chunk), a LangChain text splitter or a LlamaIndex node
      parser given as ``splitter=`` is used by ``from_documents`` and later ``insert`` calls,
      ``chunking=False`` keeps documents whole, ``doc_ids()`` lists the documents,
      ``upsert`` replaces a document by id (answers equal a fresh build of the new corpus);
    * an empty or blank query raises ``EmptyQueryError`` (sync and async); a 50,000-character
      question reaches the method cut to the index's ``max_query_chars``, with one warning,
      and answers as the cut question (:mod:`.query_bound`);
    * ``k`` is honoured (1, 3 and the default), invalid ``k`` (``0``, ``-1``, ``"3"``,
      ``2.0``, ``True``) raises ``InvalidArgumentError``, ``aretrieve`` equals ``retrieve``,
      explanations are JSON-serialisable mappings;
    * the API contract: ``from_documents`` names every argument (no untyped ``**kwargs``:
      a ``**options: Unpack[TypedDict]`` is read as its keys; it takes
      ``index_params``, ``query_params`` and ``preset``, and ``embedding`` when the
      constructor does), ``as_retriever(k=2)`` returns 2 results and a call's ``k`` wins, an
      unknown ``as_retriever`` override raises ``InvalidParameterError``, and ``preset``
      with a params object raises ``InvalidArgumentError``;
    * concurrency (:mod:`~graphrag_integrations.core.index.locking`): the mutating methods hold
      the index's write lock and ``retrieve`` / ``persist`` its read lock; threads querying
      while another inserts and deletes (:data:`MUTATIONS`) get no error and every answer is
      the answer of a sequential replay after some number of those mutations (never half of
      one); threads inserting distinct documents at once each add theirs exactly once, two
      inserting the same one add it once; ``ainsert`` / ``adelete`` work and the event loop
      keeps running while they wait for the lock;
    * metadata filters (:mod:`~graphrag_integrations.core.retrieval.filters`) over
      :func:`filter_documents`: ``retrieve(q, k, filter=...)`` returns only matching passages
      (each of :data:`FILTER_CASES` checked against its Python predicate; the targeted
      document first when it matches), ``k`` is honoured, a filter matching nothing (or an
      unknown key) returns ``[]`` (core, async, LangChain, LlamaIndex), LangChain
      ``invoke(q, filter=)`` / ``as_langchain_retriever(filter=, search_kwargs=)`` and
      LlamaIndex ``MetadataFilters`` (``OR``, ``NOT``, nested; retriever and query engine)
      restrict results, inserted documents are filtered by their metadata, and a malformed
      filter raises ``ValueError`` before the index runs;
    * a filter is an access boundary (:mod:`.boundary`): over two tenants whose documents share
      entities, no word only the other tenant's documents hold reaches any output of any
      surface (results, explanations, LangChain and LlamaIndex metadata, tools, the query
      engine, the ``show`` picture), also when a retriever bound to the filter is called with
      ``filter={}``; where ``corpus_wide_scores`` is false the filtered top-k equals an index
      built from the matching documents alone;
    * checkpointed builds (:mod:`~graphrag_integrations.core.index.checkpoint`): a
      ``from_documents(..., checkpoint_dir=, checkpoint_every=)`` killed in its second batch
      (before it is saved) resumes from the first and ends answering as an uninterrupted
      checkpointed build;
    * langchain-tests' ``RetrieversIntegrationTests`` through ``as_langchain_retriever``, and
      the LangChain and LlamaIndex retrievers return the core results in the same order.

    Examples
    --------
    In ``tests/.../test_compliance_mymethod.py``::

        from graphrag_integrations.testing import IndexComplianceTests
        from my_package import MyIndex

        class TestMyIndexCompliance(IndexComplianceTests):
            index_class = MyIndex

            # only if MyIndex is not built as MyIndex.from_documents(docs, embedding=embedder);
            # ``options`` are load options (errors=, report=) to pass on to from_documents
            def build_index(self, documents, embedder, **options):
                return MyIndex.from_documents(documents, embedding=embedder, depth=2, **options)
    """
