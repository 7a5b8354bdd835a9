-- An ask's form (user-input/ask with `form`: MCP's elicitation requestedSchema, issue 28), as
-- JSON text, or null for an ask without one; GET /asks lists it beside `choices`. Rows written
-- before it read as null: those asks had no form.
ALTER TABLE asks ADD COLUMN form TEXT;
