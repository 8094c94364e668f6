"""The web app in headless Chromium, driven by Playwright (run by tests/web.rs).

Phases:
  browse  - underwriter: sign in, search, open a scorecard, open a finding, an incident,
            download the report; monitor: its scorecard, keyboard, phone width, predictions.
  rescan  - monitor: rescan the DMARC finding of its domain and see it close (the test has
            fixed the lab's DMARC record before this phase).

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
    ap.add_argument("--phase", choices=["browse", "rescan"], required=True)
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
        else:
            rescan(page, a, shot, sign_in)
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


if __name__ == "__main__":
    main()
