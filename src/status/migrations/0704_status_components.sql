-- The status page's components became the services' interfaces (issue 27): incidents that named
-- a whole service now name its interfaces, storage (no interface of its own) every one; the
-- probes of the old components are no longer shown.
update status_incidents set components = array(
  select distinct c from unnest(components) as old(id),
    lateral unnest(case old.id
      when 'model' then array['chat', 'media', 'agents']
      when 'directory' then array['search', 'places', 'sales', 'concierge']
      when 'storage' then array['chat', 'media', 'agents', 'search', 'places', 'sales', 'concierge']
      else array[old.id] end) as c
  order by c);
delete from status_probes where component in ('model', 'directory', 'storage');
