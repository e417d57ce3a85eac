// Whether the caller sees `plan`: a plan of $owner (null: anyone's) in $project (null: any). Visibility's one
// statement, included wherever a view judges a plan (Principal.sees is the same rule in Python). It is an
// expression over the variable `plan`: the including statement names the plan it judges so.
($owner IS NULL OR plan.owner = $owner) AND ($project IS NULL OR plan.project = $project)
