"""Study families: the logic of a paper's protocol that is really logic (draws, number text, parsing rules),
kept apart from its wording, which lives in template files under ``studies/<family>/``."""
