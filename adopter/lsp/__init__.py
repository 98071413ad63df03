"""`adopter lsp`: a language server (pygls) over adopter.api.editor."""
