"""Framework-free core shared by every method: documents, NLP, models, stores, constraints."""
