-- A reply's quantity may be a range (QuoteQuantity.high, the upper end): readings kept before
-- it was read are single figures, whose upper end is their value.
update concierge_contacts
set reading = jsonb_set(reading, '{quantity,high}', reading->'quantity'->'value')
where jsonb_typeof(reading->'quantity') = 'object' and not (reading->'quantity' ? 'high');
