// How many decisions the database holds (from the count store): whether the whole database is
// worth worker processes.
MATCH (d:Decision)
RETURN count(d) AS decisions
