-- opcli's record of business actions, version 2 (issue 42): the indexes the record of claims asks
-- that version 1 lacks. Applied by `opcli record setup` after 0001 (src/record-pg/migrate.ts).
--
-- by the row key of a --key batch (the hash of its --key value, which the intent's `detail` carries
-- as `row`): what became of that row, in any run of the store, on any computer:
CREATE INDEX intents_by_row_key ON opcli.intents (origin, store_id, ((detail->>'row')), attempt)
  WHERE kind = 'claim' AND detail ? 'row';
-- by the order a claim was filed as (`claims history --order`; the outcome's `detail` carries the
-- order as --order compares it):
CREATE INDEX outcomes_by_order ON opcli.outcomes (((detail->>'order'))) WHERE detail ? 'order';
