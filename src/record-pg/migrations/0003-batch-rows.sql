-- opcli's record of business actions, version 3: a batch's resume asks the record (no journal is
-- written). Applied by `opcli record setup` after 0002 (src/record-pg/migrate.ts).
--
-- A batch row's intent carries in its `detail` the batch's name (`journal`: the path its journal had,
-- or --journal), its row key under --key (`row`; else the row key is the content key), its "looks
-- like" fingerprint in the batch (`like`) and its claim (`claim`, for what differs when a changed or
-- similar row turns up). The resume asks two questions of them (src/record-pg/claims.ts BATCH_QUESTIONS):
--
-- what the earlier runs of a batch did with a row, by its row key:
CREATE INDEX intents_by_batch_row ON opcli.intents (origin, store_id, ((detail->>'journal')), (coalesce(detail->>'row', key)))
  WHERE kind = 'claim' AND detail ? 'journal';
-- the rows of a batch that look like a row (the same customer and item):
CREATE INDEX intents_by_batch_like ON opcli.intents (origin, store_id, ((detail->>'journal')), ((detail->>'like')))
  WHERE kind = 'claim' AND detail ? 'like';
-- 0002's index by a --key row key alone is superseded by the first (a row key is the batch's): no
-- question asks it, and every intent would keep paying for it.
DROP INDEX opcli.intents_by_row_key;
