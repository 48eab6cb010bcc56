-- Addresses as the post writes them (issue 28): a listing's `address.city` is its municipality
-- and its district a field of its own, so the `city` filter can ask for either. Listings stored
-- before keep a null district (their city may be a district's name: the filter counts those).
alter table listings add column district_folded text;
