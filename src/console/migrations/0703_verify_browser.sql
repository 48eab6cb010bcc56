-- The browser a verification link was asked from (issue 20, login CSRF through a mailed link):
-- the sha256 of a random cookie set on that browser. Opening the link there verifies the address
-- and signs in; opened anywhere else it verifies only, and the person logs in with the password,
-- so someone else's link cannot sign a victim into the sender's account.
alter table console_tokens add column browser_hash text;
