"""KG-Translator: translate queries into graph-level clues on a parsing-based KG.

Modules named after the paper's stages: ``parsekg`` (§3.2 ParseKG construction),
``constraints`` (§3.3.1 KG-constrained indexing), ``translation`` (§3.3.2 bidirectional
constrained translation), ``retrieval`` (§3.4 clue-traced passage retrieval, multi-step),
``training`` (§3.3.3 / F.1 structure-aware fine-tuning); ``store`` holds all storage,
``params`` the parameters and presets, ``index`` the lifecycle class
:class:`~graphrag_integrations.methods.kgt.index.ParseKGTranslatorRetriever`, and
``evaluation`` the evaluation builder.
"""
