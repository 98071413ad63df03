"""Infrastructure below the analyses: atomic writes, the result cache and its JSON codec, worker processes."""
