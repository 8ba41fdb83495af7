"""Reading argvs: one option engine with dialects (:mod:`.engine`), the canonical
spelling rules see (:mod:`.canonical`), and the command-independent respellings of
operands (paths, tilde, globs, braces, expansions: :mod:`.spellings`)."""
