"""The web app in headless Chromium, driven by Playwright (run by tests/web.rs).

Phases:
  browse  - underwriter: sign in, search, open a scorecard, open a finding, an incident,
            download the report; monitor: its scorecard, keyboard, phone width, predictions.
  rescan  - monitor: rescan the DMARC finding of its domain and see it close (the test has
            fixed the lab's DMARC record before this phase).
  portfolio - a key of an organisation: make a portfolio, add companies by pasting domains
            and by a CSV file (an applicant new to Rampart lands rated while the page
            watches), sort, filter by tier and remove the filter's chip, edit a tier and
            tags in place, download the CSV, the portfolio's and a company's findings
            tables with filters, compare two companies, search results with grades.

Every page is saved as a screenshot under --shots. Any console error, page error or
failed request fails the run. Exit status 0 when every step held.
"""

import argparse
import os
import re
import sys

from playwright.sync_api import expect, sync_playwright

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--underwriter", required=True)
    ap.add_argument("--monitor", required=True)
    ap.add_argument("--company", required=True, help="the monitor key's company name")
    ap.add_argument("--phase", choices=["browse", "rescan", "portfolio", "alerts"], required=True)
    ap.add_argument("--portfolio-key", help="a key of an organisation, with the portfolio scope")
    ap.add_argument("--applicant", help="the domain of a lab applicant that Rampart does not know yet")
    ap.add_argument("--shots", required=True)
    ap.add_argument("--chromium", default=os.environ.get("RAMPART_CHROMIUM", "/usr/bin/chromium"))
    a = ap.parse_args()
    os.makedirs(a.shots, exist_ok=True)
    problems = []

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=FLAGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} {r.failure}"))

        def shot(name, full=True):
            page.screenshot(path=os.path.join(a.shots, f"{a.phase}-{name}.png"), full_page=full)

        def sign_in(key, at="/"):
            # Signing in at a view shows that view; the browser then waits until no request
            # is in flight, so that the next navigation cannot abort the view's fetch.
            page.goto(a.base + at)
            expect(page.locator("#signin")).to_be_visible()
            page.fill("#apikey", key)
            page.click("#signin-form button")
            expect(page.locator("#nav")).to_be_visible()
            expect(page.locator("#view[aria-busy]")).to_have_count(0)
            page.wait_for_load_state("networkidle")

        if a.phase == "browse":
            browse(page, a, shot, sign_in)
        elif a.phase == "rescan":
            rescan(page, a, shot, sign_in)
        elif a.phase == "alerts":
            alerts(page, a, shot, sign_in)
        else:
            portfolio(page, a, shot, sign_in)
        browser.close()

    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(f"{a.phase}: every step held; screenshots in {a.shots}")


def browse(page, a, shot, sign_in):
    # A wrong key is refused on the sign-in form.
    page.goto(a.base + "/")
    page.fill("#apikey", "rk_not_a_key")
    page.click("#signin-form button")
    expect(page.locator("#signin-error")).to_contain_text("key")
    shot("signin-refused")

    # Underwriter: search, scorecard, a finding, an incident, the report.
    sign_in(a.underwriter)
    expect(page.get_by_role("heading", name="Find a company")).to_be_visible()
    shot("home")
    page.fill("#q", a.company.split()[0])
    page.click("form.search button")
    link = page.get_by_role("link", name=a.company, exact=True)
    expect(link).to_be_visible()
    shot("search")
    link.click()
    expect(page.get_by_role("heading", name=a.company, level=1)).to_be_visible()
    expect(page.locator("li.component")).to_have_count(12)
    for section in ["Components", "Score history", "Subsidiaries", "Applications", "Infrastructure",
                    "Software (SBOM) with CVEs", "Incident history"]:
        expect(page.get_by_role("heading", name=section, exact=True)).to_be_visible()
    assert page.locator("svg.chart").count() >= 1, "the history chart"
    assert page.locator("ul.tree li li").count() >= 1, "a subsidiary in the tree"
    assert page.locator("ul.cves li").count() >= 1, "SBOM CVEs"
    assert page.locator("form.rescan").count() == 0, "an underwriter cannot rescan"
    shot("scorecard")
    shot("scorecard-top", full=False)

    # Open a finding: its evidence and remediation show.
    page.locator("details.findings > summary").first.click()
    finding = page.locator("details.finding").first
    finding.locator(":scope > summary").click()
    expect(finding.get_by_text("Remediation")).to_be_visible()
    expect(finding.get_by_text("Evidence")).to_be_visible()
    shot("finding")

    # The report downloads as one HTML document naming the company.
    with page.expect_download() as d:
        page.click("button[data-report]")
    path = os.path.join(a.shots, "report.html")
    d.value.save_as(path)
    with open(path, encoding="utf-8") as f:
        assert a.company in f.read(), "the report names the company"

    # An incident of its history, in detail.
    page.locator("ul.incidents a").first.click()
    expect(page.locator("dl.wide")).to_be_visible()
    shot("incident")
    page.go_back()
    expect(page.locator("li.component")).to_have_count(12)

    # The underwriter prices on the company's loss figures: its predictions, named.
    page.locator("nav.actions").get_by_role("link", name="Predictions").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Predictions: "), level=1)).to_be_visible()
    expect(page.locator("svg.chart")).to_have_count(3)
    whys = page.locator("table.what-if td.why")
    if whys.count():
        assert all("Net: " in t for t in whys.all_inner_texts()), "every what-if says why"
    shot("underwriter-predictions")
    page.get_by_role("link", name="← Scorecard").click()
    expect(page.locator("li.component")).to_have_count(12)

    # Monitor: its own scorecard with rescans and subsidiary forms; keyboard; phone width.
    page.click("#signout")
    expect(page.locator("#signin")).to_be_visible()
    sign_in(a.monitor)
    expect(page.get_by_role("heading", name="Your company")).to_be_visible()
    page.get_by_role("link", name="Open your scorecard").click()
    expect(page.get_by_role("heading", name=a.company, level=1)).to_be_visible()
    assert page.locator("form.rescan").count() >= 1, "a rescan per finding"
    shot("monitor")

    # Add a subsidiary through the form, see it in the tree, remove it again.
    page.get_by_text("Add a subsidiary").click()
    page.fill("#sub-name", "Kestrel Fuel Cards")
    page.fill("#sub-website", "https://www.kestrelfuel.test")
    page.fill("#sub-sid", "kestrel-fuel-cards")
    page.fill("#sub-industry", "Financial Transactions Processing")
    page.fill("#sub-employees", "40")
    page.click("form.stack button")
    expect(page.locator("#status")).to_contain_text("Kestrel Fuel Cards")
    tree = page.locator("ul.tree")
    expect(tree).to_contain_text("Kestrel Fuel Cards")
    shot("subsidiary-added")
    page.get_by_role("button", name="Remove Kestrel Fuel Cards").click()
    expect(page.locator("#status")).to_contain_text("deleted")
    expect(tree).not_to_contain_text("Kestrel Fuel Cards")

    # Dispute a finding through its form: the page marks it and its component disputed.
    ports = page.locator("#component-open_ports")
    ports.locator("details.findings > summary").click()
    first = ports.locator("details.finding").first
    first.locator(":scope > summary").click()
    first.locator("details.dispute > summary").click()
    first.locator("select[name=reason]").select_option("compensating_control")
    first.locator("textarea[name=explanation]").fill("RDP answers only through our VPN gateway")
    first.get_by_role("button", name="Send dispute").click()
    expect(page.locator("#status")).to_contain_text("an operator will decide")
    expect(page.locator("#component-open_ports .component-head .tag.disputed")).to_be_visible()
    shot("disputed")

    # Keyboard: a component's findings open with Enter on their focused summary.
    summary = page.locator("details.findings > summary").first
    summary.focus()
    page.keyboard.press("Enter")
    assert summary.evaluate("s => s.parentElement.open"), "Enter opens the findings"

    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"the phone-width page scrolls sideways by {overflow} px"
    shot("monitor-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_role("link", name="Predictions").first.click()
    expect(page.get_by_role("heading", name="Predictions", level=1)).to_be_visible()
    expect(page.locator("svg.chart")).to_have_count(3)
    figures = page.locator("dl.figures")
    for text in ["VaR 95 %", "VaR 99 %", "TVaR 95 %", "Expected loss"]:
        expect(figures.get_by_text(text, exact=True)).to_be_visible()
    expect(page.get_by_text("Inputs and method").first).to_be_visible()
    shot("predictions")


def rescan(page, a, shot, sign_in):
    sign_in(a.monitor, at="/app/monitor")
    expect(page.get_by_role("heading", name=a.company, level=1)).to_be_visible()
    dmarc = page.locator("#component-dmarc")
    dmarc.locator("details.findings > summary").click()
    finding = dmarc.locator("details.finding").first
    finding.locator(":scope > summary").click()
    finding_id = finding.get_attribute("data-finding-id")
    shot("before")
    finding.locator("form.rescan button").click()
    expect(page.locator("#status")).to_contain_text(re.compile("Rescan|queued", re.I))
    expect(page.locator("#status")).to_contain_text("the finding is closed", timeout=150_000)
    assert page.locator(f'[data-finding-id="{finding_id}"]').count() == 0, "the finding is gone from the page"
    shot("after")


def portfolio(page, a, shot, sign_in):
    sign_in(a.portfolio_key)
    expect(page.get_by_role("heading", name="Your portfolios")).to_be_visible()
    page.fill("#new-portfolio", "Book 2027")
    page.click("#portfolios form button")
    expect(page.locator("#status")).to_contain_text("created")
    page.get_by_role("link", name="Book 2027").click()
    expect(page.get_by_role("heading", name="Book 2027", level=1)).to_be_visible()
    shot("empty")

    # Paste domains: two companies Rampart rates, an applicant it does not know, and an IP
    # address it refuses. The applicant's row turns rated while the page watches.
    page.fill("#domains", f"kestrelfreight.test\nbluefinbank.test\n{a.applicant}\n10.0.0.1")
    page.click("form.add button[type=submit]")
    landing = page.locator("#status section.landing")
    expect(landing).to_contain_text("4 rows")
    expect(landing.locator('tr[data-social-id="kestrel-logistics"]')).to_have_attribute("data-status", "rated")
    expect(landing.locator("tr", has_text="10.0.0.1")).to_have_attribute("data-status", "refused")
    shot("added")
    applicant = landing.locator(f'tr[data-social-id="{a.applicant}"]')
    expect(applicant).to_have_attribute("data-status", "rated", timeout=60_000)
    # Named by its site; quick first, and in the lab the full scan may already be done.
    expect(applicant).to_contain_text(re.compile("Harbourline Freight Ltd.*rated (quick|full)"))
    expect(page.locator("#status .landing-note")).to_have_text("Every row has landed.")
    rows = page.locator("table.portfolio-table tbody tr")
    expect(rows).to_have_count(3)
    shot("landed")

    # A CSV file: its columns set the tier and the tags.
    page.locator("#add-companies > summary").click()
    page.set_input_files("input[type=file][data-into=domains]", files=[{
        "name": "book.csv", "mimeType": "text/csv",
        "buffer": b"domain,tier,tags\nkestrelcoldchain.test,1,cold chain\n"}])
    expect(page.locator("#domains")).to_have_value(re.compile("kestrelcoldchain.test"))
    page.click("form.add button[type=submit]")
    expect(page.locator("#status section.landing")).to_contain_text("1 row")
    expect(rows).to_have_count(4)

    # Sorted by score, best first: the heading says so and the scores fall.
    page.locator('th a[data-sort="score"]').click()
    expect(page.locator('th[aria-sort="descending"] a[data-sort="score"]')).to_be_visible()
    scores = [float(t.split()[0]) for t in page.locator("table.portfolio-table tbody td.num .grade").all_inner_texts()
              if t.split() and t.split()[0][0].isdigit()]
    assert len(scores) == 4 and scores == sorted(scores, reverse=True), f"sorted by score: {scores}"
    shot("sorted")

    # Filtered by tier: the CSV's tier-1 company only; its chip removes the filter.
    page.select_option("form.filters select[name=tier]", "1")
    page.click("form.filters button[type=submit]")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-social-id", "kestrel-coldchain")
    expect(rows.first.locator("a.chip")).to_have_text("cold chain")
    page.locator("a.chip.active", has_text="tier: 1").click()
    expect(rows).to_have_count(4)

    # A tier and tags edited in place.
    row = page.locator('table.portfolio-table tr[data-social-id="bluefin-bank"]')
    row.locator("select[name=tier]").select_option("2")
    row.locator("input[name=tags]").fill("core, eu")
    row.get_by_role("button", name="Save").click()
    expect(page.locator("#status")).to_contain_text("bluefin-bank: tier 2, core, eu.")
    expect(row.locator("a.chip", has_text="core")).to_be_visible()
    expect(row.locator("select[name=tier]")).to_have_value("2")
    shot("edited")

    # The CSV: every row, with the edited record.
    with page.expect_download() as d:
        page.get_by_role("button", name="Download CSV").click()
    path = os.path.join(a.shots, "portfolio.csv")
    d.value.save_as(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[0].startswith("social_id,"), lines[0]
    assert len(lines) == 5 and any(l.startswith("bluefin-bank,") and "core" in l for l in lines), lines

    # The portfolio's findings, filtered to one component.
    page.get_by_role("link", name="Findings", exact=True).click()
    expect(page.get_by_role("heading", name="Findings: Book 2027")).to_be_visible()
    page.select_option("form.filters select[name=risk_vector]", "open_ports")
    page.click("form.filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"risk_vector=open_ports"))
    expect(page.locator("#view")).not_to_have_attribute("aria-busy", "true")
    found = page.locator("table.findings-table tbody > tr")
    expect(found.first).to_be_visible()
    # The table is the filtered one once no row of another component is left.
    expect(found.locator(":scope > td:nth-child(2)").filter(has_not_text="open_ports")).to_have_count(0)
    components = found.locator(":scope > td:nth-child(2)").all_inner_texts()
    assert components and set(components) == {"open_ports"}, components
    shot("findings")

    # Compare two companies: components side by side, a line per component.
    page.get_by_role("link", name="← Book 2027").click()
    page.check('input[form=compare][value="kestrel-logistics"]')
    page.check('input[form=compare][value="bluefin-bank"]')
    page.get_by_role("button", name=re.compile("Compare the ticked")).click()
    expect(page.get_by_role("heading", name=re.compile("^Compare: "), level=1)).to_be_visible()
    expect(page.locator("table.compare tbody tr[data-component]")).to_have_count(12)
    expect(page.locator("ul.legend").first).to_contain_text("Global")
    shot("compare")

    # The organisation sets underwriting guidelines; a scorecard shows their outcome.
    rules = {"rules": [
        {"id": "min-score", "kind": "min_global_score", "value": 99, "action": "refer"},
        {"id": "no-kev", "kind": "no_kev_cve", "action": "decline"}]}
    answer = page.request.post(a.base + "/portfolio-set-guidelines", data=rules,
                               headers={"apikey": a.portfolio_key})
    assert answer.ok, answer.text()

    # A company's findings from its scorecard: every one of a component, not five.
    page.get_by_role("link", name=re.compile("Kestrel")).first.click()
    expect(page.locator("li.component")).to_have_count(12)
    guidelines = page.locator("section.guidelines")
    expect(guidelines).to_contain_text(re.compile(r"Underwriting guidelines \(version 1\): (refer|decline)"))
    expect(guidelines).to_contain_text("min-score")
    # Its plan to the next grade: the fewest fixes, each with the score after it.
    page.get_by_role("link", name=re.compile("^Plan to reach ")).click()
    expect(page.get_by_role("heading", name=re.compile("^Plan to reach grade [A-E]: Kestrel"))).to_be_visible()
    expect(page.locator('section.plan[data-outcome="plan"]')).to_be_visible()
    assert page.locator("ol.plan-steps > li").count() >= 1, "a step at least"
    shot("plan")
    page.go_back()
    expect(page.locator("li.component")).to_have_count(12)
    ports = page.locator("#component-open_ports")
    ports.locator("details.findings > summary").click()
    ports.get_by_role("link", name=re.compile("^All ")).click()
    expect(page.get_by_role("heading", name=re.compile("^Findings: Kestrel"))).to_be_visible()
    expect(page.locator("form.filters select[name=risk_vector]")).to_have_value("open_ports")

    # Search results carry the grade and the score.
    page.goto(a.base + "/app/search?q=Kestrel")
    result = page.locator('ul.results li[data-social-id="kestrel-logistics"] .grade')
    expect(result).to_have_text(re.compile(r"^\d+\.\d [A-F]$"))
    shot("search")



def alerts(page, a, shot, sign_in):
    # Two alerts of Book 2027 are waiting (the test raised them): the header counts them.
    sign_in(a.portfolio_key)
    expect(page.locator("#alerts-link")).to_be_visible()
    expect(page.locator("#unread")).to_have_text("2")
    page.locator("#alerts-link").click()
    expect(page.get_by_role("heading", name="Alerts", level=1)).to_be_visible()
    items = page.locator("ol.alerts article.alert")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("Book 2027")
    shot("inbox")

    # Filtered by kind: the one finding alert, saying what changed and why.
    page.select_option("form.filters select[name=kind]", "finding_opened")
    page.click("form.filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"kind=finding_opened"))
    expect(items).to_have_count(1)
    expect(items.first.locator("p.summary")).to_contain_text("finding opened")
    expect(items.first.locator("p.explanation")).to_contain_text("Score ")

    # Acknowledged in place: the count falls, the alert says who acknowledged it.
    items.first.get_by_role("button", name="Acknowledge").click()
    expect(page.locator("#status")).to_contain_text("Acknowledged")
    expect(items.first).to_contain_text(re.compile(r"Acknowledged .* by key"))
    expect(page.locator("#unread")).to_have_text("1")
    shot("acknowledged")

    # A key without the portfolio scope has no inbox link.
    page.click("#signout")
    sign_in(a.underwriter)
    expect(page.locator("#alerts-link")).to_be_hidden()

if __name__ == "__main__":
    main()
