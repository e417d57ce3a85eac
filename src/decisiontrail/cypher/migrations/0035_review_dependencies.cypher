// Before 0035 a review kept its proposal's dependencies only inside the proposal's JSON; they are
// now beside it as depends_on_ids, so a correction can find a review that waits on a decision it
// supersedes. Read here from the JSON the service wrote (pydantic's compact form:
// "depends_on":["<id>","<id>"], ids of letters and digits), for reviews that do not have them yet.
MATCH (r:Review)
WHERE r.depends_on_ids IS NULL
WITH r, split(r.proposal, '"depends_on":[') AS parts
WITH r, CASE WHEN size(parts) < 2 THEN '' ELSE split(parts[1], ']')[0] END AS listed
SET r.depends_on_ids = [quoted IN split(listed, ',') WHERE size(quoted) > 2 | substring(quoted, 1, size(quoted) - 2)]
