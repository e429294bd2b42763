-- opcli's record of business actions, version 1 (issue 42): the claims filed and the store credit
-- paid by a team, in PostgreSQL. Applied by `opcli record setup` in one transaction with the row of
-- version 1 in opcli.schema_version (src/record-pg/migrate.ts); never edited once released: a change
-- is a new numbered file.
--
-- The rules are the database's, not the client's:
--   * an intent is one attempt of one key: UNIQUE (origin, store_id, kind, key, attempt), so two
--     members who try the same key at once cannot both get attempt N (one insert fails, the other
--     wins, and the loser reads what the winner wrote);
--   * an outcome or a note references its attempt (filing), which must exist first;
--   * members may INSERT and SELECT, nothing else (opcli.grant_member below): no UPDATE, DELETE,
--     TRUNCATE, no schema change, and they cannot set `author` (the role that wrote the row,
--     current_user) or `recorded_at` (the server's clock).

-- A batch run: who filed its rows, with which profile, from which file and journal.
CREATE TABLE opcli.runs (
  run text PRIMARY KEY CHECK (run <> ''),
  origin text NOT NULL,
  store_id text NOT NULL,
  source text NOT NULL,
  journal text,
  journal_id text,
  os_user text,
  host text,
  profile text,
  at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  author name NOT NULL DEFAULT current_user
);

-- An attempt to act on a key (file a claim, pay a credit), committed before its request leaves.
-- origin: the service API's origin; store_id: the service's store ('' for none, so the unique key
-- holds); key: the claim's content key, or the credit's `shop:…|store:…|claim:…` key.
CREATE TABLE opcli.intents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('claim', 'credit')),
  origin text NOT NULL,
  store_id text NOT NULL,
  key text NOT NULL CHECK (key <> ''),
  attempt integer NOT NULL CHECK (attempt > 0),
  filing text NOT NULL UNIQUE CHECK (filing <> ''),
  at timestamptz NOT NULL,
  run text REFERENCES opcli.runs (run),
  source text,
  line integer,
  os_user text,
  host text,
  profile text,
  similarity text,
  customer_email text,
  customer_id text,
  item text,
  amount_cents bigint,
  currency text,
  forced boolean NOT NULL DEFAULT false,
  detail jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(detail) = 'object'),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  author name NOT NULL DEFAULT current_user,
  CONSTRAINT intents_one_attempt UNIQUE (origin, store_id, kind, key, attempt)
);

-- What became of an attempt. A later outcome of the same attempt may only raise it (src/core/record-outcome.ts).
CREATE TABLE opcli.outcomes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  filing text NOT NULL REFERENCES opcli.intents (filing),
  status text NOT NULL CHECK (status IN ('filed', 'rejected', 'uncertain', 'not_sent', 'issued', 'failed')),
  at timestamptz NOT NULL,
  source_order_id text,
  card_id text,
  path text,
  error text,
  detail jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(detail) = 'object'),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  author name NOT NULL DEFAULT current_user
);

-- Later findings and notes: a possible double credit, an entry set aside as uncertain, a person's note.
CREATE TABLE opcli.notes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('warning', 'set-aside', 'note')),
  filing text REFERENCES opcli.intents (filing),
  origin text NOT NULL,
  store_id text NOT NULL,
  key text,
  message text NOT NULL,
  os_user text,
  at timestamptz NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(detail) = 'object'),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  author name NOT NULL DEFAULT current_user
);

-- A file record copied in by `opcli record import`: its first `lines` lines are in (a file that grew
-- since is imported from there on, in a row of its own). Its rows keep their filing ids, so a second
-- import adds nothing.
CREATE TABLE opcli.imports (
  file_id text NOT NULL,
  path text NOT NULL,
  lines integer NOT NULL CHECK (lines >= 0),
  PRIMARY KEY (file_id, lines),
  at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  author name NOT NULL DEFAULT current_user
);

-- The roles `record setup --member` named: each setup grants them again what the schema of its version needs.
CREATE TABLE opcli.members (
  role name PRIMARY KEY,
  added_at timestamptz NOT NULL DEFAULT now(),
  added_by name NOT NULL DEFAULT current_user
);

-- The questions the record asks, each an index:
-- by key: intents_one_attempt (origin, store_id, kind, key, attempt) above.
-- by similarity (a claim for the same customer and item under another key):
CREATE INDEX intents_by_similarity ON opcli.intents (origin, store_id, similarity) WHERE similarity IS NOT NULL;
-- by customer (history, and what was paid to one person):
CREATE INDEX intents_by_customer ON opcli.intents (origin, store_id, customer_email, at) WHERE customer_email IS NOT NULL;
-- the 30-day hold of a similar credit (same customer, amount and currency, recent):
CREATE INDEX intents_credit_hold ON opcli.intents (origin, store_id, customer_email, amount_cents, currency, at) WHERE kind = 'credit';
-- by source file and run (a batch resumed, on this computer or another):
CREATE INDEX intents_by_source ON opcli.intents (source, run, line) WHERE source IS NOT NULL;
CREATE INDEX intents_by_run ON opcli.intents (run) WHERE run IS NOT NULL;
-- an attempt's outcomes and notes:
CREATE INDEX outcomes_by_filing ON opcli.outcomes (filing);
CREATE INDEX notes_by_filing ON opcli.notes (filing) WHERE filing IS NOT NULL;
CREATE INDEX notes_by_key ON opcli.notes (origin, store_id, key) WHERE key IS NOT NULL;

-- What a member may do, granted by `record setup` to each member role (and again, on each setup, to
-- every role of opcli.members). INSERT is granted column by column: author, recorded_at and the
-- generated ids are not among them, so a member's row names the member and the server's time.
-- Run by the administrator (the owner of the schema); members may not call it.
CREATE FUNCTION opcli.grant_member(member name) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
  EXECUTE format('GRANT USAGE ON SCHEMA opcli TO %I', member);
  EXECUTE format('GRANT SELECT ON opcli.schema_version, opcli.members, opcli.runs, opcli.intents, opcli.outcomes, opcli.notes, opcli.imports TO %I', member);
  EXECUTE format('GRANT INSERT (run, origin, store_id, source, journal, journal_id, os_user, host, profile, at) ON opcli.runs TO %I', member);
  EXECUTE format('GRANT INSERT (kind, origin, store_id, key, attempt, filing, at, run, source, line, os_user, host, profile, similarity, '
    'customer_email, customer_id, item, amount_cents, currency, forced, detail) ON opcli.intents TO %I', member);
  EXECUTE format('GRANT INSERT (filing, status, at, source_order_id, card_id, path, error, detail) ON opcli.outcomes TO %I', member);
  EXECUTE format('GRANT INSERT (kind, filing, origin, store_id, key, message, os_user, at, detail) ON opcli.notes TO %I', member);
  EXECUTE format('GRANT INSERT (file_id, path, lines, at) ON opcli.imports TO %I', member);
  INSERT INTO opcli.members (role) VALUES (member) ON CONFLICT (role) DO NOTHING;
END
$$;
REVOKE ALL ON FUNCTION opcli.grant_member(name) FROM PUBLIC;
