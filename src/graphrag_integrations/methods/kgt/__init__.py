"""KG-Translator: translate queries into graph-level clues on a parsing-based KG.

The paper's stages, one module each:

* ``parsekg`` (§3.2, F.2) - ParseKG construction: every sentence of a passage becomes a
  hyperedge (its entities as heads / tails, the masked sentence as hyperrelation);
* ``constraints`` (§3.3.1) - KG-constrained indexing: entity tries and per-entity relation
  substring indexes;
* ``translation`` (§3.3.2, Algorithms 1-2) - bidirectional constrained translation of a
  query into clues ``(entity, relation span, direction)``;
* ``retrieval`` (§3.4) - clue-traced passage retrieval and the multi-step rounds;
* ``training`` (§3.3.3, F.1) - structure-aware fine-tuning of the translator (LoRA), the
  ``train --method kgt`` trainer.

Around them: ``store`` holds all storage (the ParseKG and passage vectors on the core
``IndexStore``), ``lora`` the committed LoRA translator adapters (package data unpacked on
first use), ``params`` the index / query / training parameters and presets, ``index`` the
lifecycle class :class:`~graphrag_integrations.methods.kgt.index.ParseKGTranslatorRetriever`
(its persist / load hooks in ``persistence``, the translator it loads in
``translator_model``) and ``registration`` the method registration (``"kgt"``: builder and
trainer).
"""
