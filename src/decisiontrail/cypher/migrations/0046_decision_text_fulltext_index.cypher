// Decisions found across plans by their words (decision/search_decisions): a Lucene index over the
// question, the chosen option and the rationale. The analyzer is named rather than left to the
// server's setting (what a word is must not change with a server's configuration), and the index is
// updated in the committing transaction, so a decision is found as soon as its recording is answered.
CREATE FULLTEXT INDEX decision_text IF NOT EXISTS
FOR (d:Decision) ON EACH [d.question, d.chosen_option, d.rationale]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'standard-no-stop-words', `fulltext.eventually_consistent`: false}}
