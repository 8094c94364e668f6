// Rampart's scorecard page. The server renders every view; this script only keeps the
// key (in this tab's session storage), fetches views with it (`apikey` header), posts
// forms, downloads the report and CSVs, watches a rescan until it is done and follows
// added companies until they are rated. No framework.
'use strict';
(() => {
  const KEY = 'rampart.apikey';
  const view = document.getElementById('view');
  const signin = document.getElementById('signin');
  const nav = document.getElementById('nav');
  const status = document.getElementById('status');
  const key = () => sessionStorage.getItem(KEY);
  // The API's status when it refused what a view or action asked (views answer 200).
  const refusal = (response) => Number(response.headers.get('x-rampart-refused')) || (response.ok ? 0 : response.status);

  // /app/company?social_id=x -> /ui/company?social_id=x; /app/ -> /ui/home
  const viewUrl = (url) => {
    const u = new URL(url, location.origin);
    const name = u.pathname.replace(/^\/app\/?/, '').replace(/\/+$/, '') || 'home';
    return '/ui/' + name + u.search;
  };

  const say = (html) => { status.innerHTML = html; };
  const text = (s) => { const p = document.createElement('p'); p.textContent = s; return p.outerHTML; };

  function showSignin(message) {
    view.replaceChildren();
    nav.hidden = true;
    signin.hidden = false;
    document.getElementById('signin-error').textContent = message || '';
    document.getElementById('apikey').focus();
  }

  async function fetchView(url) {
    return fetch(viewUrl(url), { headers: { apikey: key() } });
  }

  async function show(url, push) {
    if (!key()) { showSignin(); return; }
    // A view the reader goes to clears what the last action said.
    if (push) { history.pushState(null, '', url); say(''); }
    view.setAttribute('aria-busy', 'true');
    let response;
    try {
      response = await fetchView(url);
    } catch (e) {
      say(text('The server did not answer: ' + e.message));
      view.removeAttribute('aria-busy');
      return;
    }
    const html = await response.text();
    view.removeAttribute('aria-busy');
    if (refusal(response) === 401) {
      sessionStorage.removeItem(KEY);
      const t = document.createElement('div'); t.innerHTML = html;
      showSignin(t.textContent.trim());
      return;
    }
    signin.hidden = true;
    nav.hidden = false;
    view.innerHTML = html;
    const h1 = view.querySelector('h1');
    document.title = (h1 ? h1.textContent + ' — ' : '') + 'Rampart';
    // A new view starts at its top; keyboard focus moves to it (screen readers read on).
    view.focus({ preventScroll: true });
    window.scrollTo(0, 0);
    unread();
  }

  // The header's count of unread alerts: shown for a key with an inbox (the portfolio
  // scope), hidden otherwise.
  async function unread() {
    const link = document.getElementById('alerts-link');
    if (!link || !key()) return;
    try {
      const response = await fetch('/ui/alerts/count', { headers: { apikey: key() } });
      if (!response.ok) { link.hidden = true; return; }
      const n = (await response.text()).trim();
      if (!n) { link.hidden = true; return; }
      document.getElementById('unread').textContent = n === '0' ? '' : n;
      link.hidden = false;
    } catch (e) {
      link.hidden = true;
    }
  }

  async function post(form) {
    const button = form.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    let response;
    try {
      response = await fetch(form.dataset.action, {
        method: 'POST',
        headers: { apikey: key(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(new FormData(form)),
      });
    } catch (e) {
      say(text('The server did not answer: ' + e.message));
      if (button) button.disabled = false;
      return;
    }
    say(await response.text());
    const refused = refusal(response);
    if (refused === 401) { sessionStorage.removeItem(KEY); showSignin('Sign in again.'); return; }
    if (refused) { if (button) button.disabled = false; return; }
    if (form.dataset.then === 'reload') show(location.pathname + location.search, false);
    if (form.dataset.then === 'watch') watch(form.dataset.finding, form.dataset.lastSeen, button);
    if (form.dataset.then === 'land') { if (button) button.disabled = false; land(); }
  }

  // After companies are added: ask every 2 s how the queued rows stand (at most 100 at
  // a time) and put each row's new status in place, until none is queued (up to 3 min);
  // then show the portfolio again, with them in it.
  async function land() {
    const table = status.querySelector('section.landing');
    if (!table) return;
    const here = location.pathname + location.search;
    for (let i = 0; i < 90; i++) {
      const queued = [...status.querySelectorAll('tr[data-status="queued"]')].map((r) => r.dataset.socialId).filter(Boolean);
      if (!queued.length) break;
      await new Promise((r) => setTimeout(r, 2000));
      if (location.pathname + location.search !== here) return;
      const q = new URLSearchParams({ portfolio_id: table.dataset.portfolio, social_id: queued.slice(0, 100).join(',') });
      let html;
      try {
        const response = await fetch('/ui/portfolio/landing?' + q, { headers: { apikey: key() } });
        if (refusal(response)) continue;
        html = await response.text();
      } catch (e) { continue; }
      const next = document.createElement('template');
      next.innerHTML = html;
      for (const row of next.content.querySelectorAll('tr[data-social-id]')) {
        const old = status.querySelector('tr[data-social-id="' + CSS.escape(row.dataset.socialId) + '"]');
        if (old && row.dataset.status !== 'queued') old.replaceWith(row);
      }
    }
    const note = status.querySelector('.landing-note');
    const left = status.querySelectorAll('tr[data-status="queued"]').length;
    if (note) note.textContent = left ? left + ' still queued after 3 minutes; they stay queued.' : 'Every row has landed.';
    show(here, false);
  }

  // After a rescan is queued: read the view again every 2 s until the finding is gone
  // (closed) or seen again (its last_seen moved), then show the new view. Up to 3 min.
  async function watch(id, lastSeen, button) {
    const here = location.pathname + location.search;
    if (button) button.textContent = 'Rescan queued…';
    for (let i = 0; i < 90; i++) {
      await new Promise((r) => setTimeout(r, 2000));
      if (location.pathname + location.search !== here) return;
      let html;
      try {
        const response = await fetchView(here);
        if (refusal(response)) continue;
        html = await response.text();
      } catch (e) { continue; }
      const next = document.createElement('template');
      next.innerHTML = html;
      const row = next.content.querySelector('[data-finding-id="' + CSS.escape(id) + '"]');
      if (row && row.dataset.lastSeen === lastSeen) continue;
      view.innerHTML = html;
      say(text(row ? 'Rescan done: the finding is still there (seen again ' + row.dataset.lastSeen + ').'
                   : 'Rescan done: the finding is closed.'));
      return;
    }
    say(text('The rescan has not finished in 3 minutes; it stays queued. Reload later.'));
  }

  async function download(url, filename) {
    const response = await fetch(url, { headers: { apikey: key() } });
    if (refusal(response)) { say(await response.text()); return; }
    const blob = await response.blob();
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = filename;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    say(text('Downloaded: ' + filename));
  }

  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[href^="/app"]');
    if (a && e.button === 0 && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.altKey) {
      e.preventDefault();
      show(a.getAttribute('href'), true);
      return;
    }
    const report = e.target.closest('[data-report]');
    if (report) { e.preventDefault(); download(report.dataset.report, report.dataset.filename); return; }
    if (e.target.id === 'signout') {
      sessionStorage.removeItem(KEY);
      history.pushState(null, '', '/app/');
      say('');
      showSignin('Signed out.');
    }
  });

  document.addEventListener('submit', (e) => {
    const form = e.target;
    e.preventDefault();
    if (form.id === 'signin-form') {
      const value = new FormData(form).get('apikey').trim();
      if (!value) return;
      sessionStorage.setItem(KEY, value);
      form.reset();
      const here = location.pathname.startsWith('/app') ? location.pathname + location.search : '/app/';
      show(here, here !== location.pathname + location.search);
    } else if ('nav' in form.dataset) {
      const query = new URLSearchParams(new FormData(form)).toString();
      show(form.getAttribute('action') + '?' + query, true);
    } else if (form.dataset.action) {
      post(form);
    }
  });

  // A file chosen for a form is read into the text field it names (a CSV of companies).
  document.addEventListener('change', async (e) => {
    const input = e.target.closest('input[type=file][data-into]');
    if (!input || !input.files.length) return;
    const file = input.files[0];
    if (file.size > 512 * 1024) { say(text('The file is over 512 KiB: split it (1,000 rows a request).')); return; }
    document.getElementById(input.dataset.into).value = await file.text();
  });

  window.addEventListener('popstate', () => show(location.pathname + location.search, false));
  show(location.pathname.startsWith('/app') ? location.pathname + location.search : '/app/', false);
})();
