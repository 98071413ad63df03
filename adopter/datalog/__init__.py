"""The Datalog analyses (clingo programs, `*.lp`) and the small runner that feeds them facts.

`main.lp` is the table of contents; each folder is one concern (`schema/`, `resolve/`,
`types/`, `flow/`, `paths/`). Python here only loads programs, adds facts and reads
back atoms: every analysis question is answered by the `.lp` files.
"""
