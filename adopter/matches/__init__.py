"""From facts to matches: the compiled rules run with the analyses on each file (in workers, through the cache), and each match becomes a record."""
