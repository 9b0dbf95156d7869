"""Text: source documents, chunking into passages, sentences and entities (spaCy)."""
