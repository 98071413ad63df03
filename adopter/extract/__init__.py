"""Python source -> fact rows: the extractor (no analysis happens here)."""
