// Replaced by decision_plan_type_sequence (0037): its prefix answers what this index did.
DROP INDEX decision_plan_type IF EXISTS
