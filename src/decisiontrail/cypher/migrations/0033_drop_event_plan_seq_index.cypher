// Replaced by event_plan_last_seq (0032): reads find a plan's runs by their last number.
DROP INDEX event_plan_seq IF EXISTS
