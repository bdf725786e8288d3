#!/usr/bin/env python3
"""Drives the operator console in headless Chromium (Selenium) against a real worker, broker and
simulator started by ConsoleTests.ConsoleBrowserTests, which passes a JSON file naming the console
URL, the tokens, the canary secrets, the seeded dead letters and the Kafka bootstrap servers.

Checks: log in; the overview numbers move while a load runs (Server-Sent Events); filter dead
letters; a dry run, then a replay of a selection at a rate with a typed confirmation; the replayed
requests' results are on Kafka (read here with confluent-kafka, an independent client); trace one
request; a viewer token cannot replay; a request without the CSRF token is refused; no page and no
stream holds a canary secret (raw, hex, base64, base64url). Saves a PNG of each page into
SCREENSHOT_DIR (scripts/screenshots points it at docs/screenshots).
"""
import base64
import json
import os
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

config = json.load(open(sys.argv[1]))
# Over plain http, browsers keep Secure cookies only for loopback (localhost, 127.0.0.1: secure contexts).
base = config["url"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
failures = []
seen = []  # (where, text) for the canary scan


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


def variants(secret):
    raw = secret.encode()
    found = {secret, raw.hex(), raw.hex().upper()}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        start, end = ((shift + 2) // 3) * 4, ((shift + len(raw)) // 3) * 4
        if end - start >= 8:
            core = encoded[start:end]
            found.add(core)
            found.add(core.replace("+", "-").replace("/", "_"))
    return found


canary_variants = {secret: variants(secret) for secret in config["canaries"]}


def remember(where):
    seen.append((where, driver.page_source))


def fetch(path, method="GET", body=None):
    """Fetches from the page's origin with its cookies (the session cookie is HttpOnly: JavaScript
    in the page cannot read it, but the browser sends it). Returns (status, text)."""
    result = driver.execute_async_script(
        """
        const [path, method, body, done] = arguments;
        const init = {method: method, credentials: 'same-origin', redirect: 'manual'};
        if (body !== null) { init.body = body; init.headers = {'Content-Type': 'application/x-www-form-urlencoded'}; }
        fetch(path, init).then(r => r.text().then(t => done([r.status, t]))).catch(e => done([0, String(e)]));
        """, path, method, body)
    seen.append((method + " " + path, result[1]))
    return result[0], result[1]


def login(token):
    driver.get(base + "/login")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "login-submit").click()
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "who"))


def logout():
    driver.find_element(By.CSS_SELECTOR, "header form button").click()
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "token"))


def shot(name):
    driver.save_screenshot(os.path.join(shots, name + ".png"))


options = webdriver.ChromeOptions()
options.binary_location = config.get("chromium", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000", "--disable-gpu"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service(config.get("chromedriver", "/usr/bin/chromedriver")), options=options)
driver.set_script_timeout(60)
try:
    # Login page, a wrong token, then the viewer.
    driver.get(base + "/")
    check(driver.find_elements(By.ID, "token"), "an anonymous visit lands on the login form")
    remember("login")
    shot("console-login")
    driver.find_element(By.ID, "token").send_keys("not-a-token-at-all-0000")
    driver.find_element(By.ID, "login-submit").click()
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, "login-message") or "forbidden" in d.page_source)
    check("not accepted" in driver.page_source, "a wrong token is refused")
    login(config["viewer_token"])
    check("victor (viewer)" in driver.find_element(By.ID, "who").text, "the viewer is named in the header")
    cookies = {c["name"]: c for c in driver.get_cookies()}
    session = cookies.get("__Host-console_session")
    check(session is not None and session.get("httpOnly") and session.get("secure") and session.get("sameSite") == "Strict",
          "the session cookie is HttpOnly, Secure, SameSite=Strict: %r" % session)
    if session:
        canary_variants["session cookie"] = variants(session["value"])
    check(driver.execute_script("return document.cookie").find("console_session") < 0, "page script cannot read the session cookie")

    # A viewer cannot replay, even with the CSRF token; nobody can post without it.
    csrf = driver.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")
    status, text = fetch("/dead-letters/replay", "POST", "csrf=%s&rate=1&confirm=REPLAY+1&expected=1" % csrf)
    check(status == 403 and text == "forbidden", "a viewer's replay is 403 without detail (got %s %r)" % (status, text[:80]))
    status, text = fetch("/dead-letters/preview", "POST", "")
    check(status == 403 and text == "forbidden", "a post without the CSRF token is 403 (got %s)" % status)
    driver.get(base + "/dead-letters")
    driver.find_element(By.ID, "preview-submit").click()
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "preview-summary"))
    check(driver.find_elements(By.ID, "viewer-note") and not driver.find_elements(By.ID, "replay-submit"),
          "the viewer's preview offers no replay")
    remember("viewer preview")
    logout()

    # The replayer: the overview moves while the load runs.
    login(config["alice_token"])
    check("alice (replayer)" in driver.find_element(By.ID, "who").text, "the replayer is named in the header")
    status, text = fetch("/dead-letters/preview", "POST", "")
    check(status == 403, "the replayer too is refused without the CSRF token (got %s)" % status)
    driver.get(base + "/")
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "requests_total").text not in ("", "–"))
    first = driver.find_element(By.ID, "requests_total").text
    WebDriverWait(driver, 90).until(lambda d: d.find_element(By.ID, "requests_total").text != first
                                    and int(d.find_element(By.TAG_NAME, "body").get_attribute("data-updates") or "0") >= 2)
    later = driver.find_element(By.ID, "requests_total").text
    check(int(later) > int(first), "requests_total moved from %s to %s by SSE updates" % (first, later))
    WebDriverWait(driver, 30).until(lambda d: len(d.find_element(By.ID, "chart_requests").get_attribute("points").split()) >= 3)
    remember("overview")
    shot("console-overview")
    status, text = fetch("/events/overview?once=1")
    check(status == 200 and text.startswith("retry:") and "event: update" in text, "the overview stream is SSE")
    body = driver.find_element(By.TAG_NAME, "body")
    updates, opens = int(body.get_attribute("data-updates") or "0"), body.get_attribute("data-stream-opens")
    check(updates >= 2 and opens == "1", "the overview's %d updates came over one open EventSource connection (%s opened)" % (updates, opens))

    driver.get(base + "/lag")
    check(config["group"] in driver.page_source, "the lag page names the worker group")
    paused = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, 'td[id^="paused-"]')]
    check(len(paused) >= 2 and all(text == "no" or text.startswith("paused by http://") for text in paused),
          "each partition row says whether it is paused and by which worker: %s" % paused)
    remember("lag")
    shot("console-lag")

    # Filter the dead letters.
    driver.get(base + "/dead-letters")
    total = driver.find_element(By.ID, "dead-letter-count").text
    check(total.startswith("6 in"), "all six dead letters listed: %s" % total)
    driver.find_element(By.ID, "filter-code").send_keys("publish_failed")
    driver.find_element(By.ID, "filter-submit").click()
    WebDriverWait(driver, 30).until(lambda d: "code=publish_failed" in d.current_url)
    check(driver.find_element(By.ID, "dead-letter-count").text.startswith("4 in"), "the code filter keeps the 4 replayable")
    remember("dead letters filtered")
    shot("console-dead-letters")
    driver.find_element(By.CSS_SELECTOR, "#dead-letter-list a").click()
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "redacted-value"))
    check("&lt;redacted&gt;" in driver.page_source or "<redacted>" in driver.find_element(By.ID, "redacted-value").text,
          "the detail view is redacted")
    remember("dead letter detail")
    shot("console-dead-letter-detail")

    # Dry run of everything (4 would be replayed, the worker's 2 undecodable ones refused and why),
    # then the replay at 2 per second with the typed confirmation.
    driver.get(base + "/dead-letters")
    driver.find_element(By.ID, "preview-submit").click()
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "preview-summary"))
    check("4 of 6 would be replayed; 2 refused" in driver.find_element(By.ID, "preview-summary").text, "the dry run names 4 and 2 refused")
    check("the message itself is malformed" in driver.find_element(By.ID, "preview").text, "the preview says why it refuses")
    button = driver.find_element(By.ID, "replay-submit")
    check(not button.is_enabled(), "the replay button waits for the typed confirmation")
    rate = driver.find_element(By.ID, "replay-rate")
    rate.clear()
    rate.send_keys("2")
    driver.find_element(By.ID, "confirm-text").send_keys("REPLAY 3")
    check(not button.is_enabled(), "a wrong confirmation keeps it disabled")
    driver.find_element(By.ID, "confirm-text").clear()
    driver.find_element(By.ID, "confirm-text").send_keys("REPLAY 4")
    check(button.is_enabled(), "the typed confirmation enables the replay")
    remember("preview")
    shot("console-replay-preview")
    started = time.time()
    button.click()
    WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.ID, "job-state"))
    WebDriverWait(driver, 90).until(lambda d: d.find_element(By.ID, "job-state").text == "finished")
    elapsed = time.time() - started
    check(elapsed >= 1.4, "4 replays at 2/s took %.2f s (at least 1.5 s expected)" % elapsed)
    verdicts = [driver.find_element(By.ID, "verdict-%d" % i).text for i in range(6)]
    check(sorted(verdicts) == ["refused"] * 2 + ["replayed"] * 4, "each entry's outcome: %r" % verdicts)
    remember("job")
    shot("console-replay-progress")

    # The replayed requests' results on Kafka (confluent-kafka, not the console).
    consumer = Consumer({"bootstrap.servers": config["bootstrap"], "group.id": "browser-test-check", "enable.auto.commit": False})
    metadata = consumer.list_topics(config["results_topic"], timeout=10)
    partitions = [TopicPartition(config["results_topic"], p, 0) for p in metadata.topics[config["results_topic"]].partitions]
    consumer.assign(partitions)
    wanted = set(config["replayable_ids"])
    answered = {}
    deadline = time.time() + 60
    while time.time() < deadline and not wanted <= set(answered):
        message = consumer.poll(0.5)
        if message is None or message.error():
            continue
        try:
            result = json.loads(message.value())
        except ValueError:
            continue
        if result.get("request_id") in wanted and result.get("final"):
            answered[result["request_id"]] = result.get("status")
    consumer.close()
    check(wanted <= set(answered), "final results on Kafka for every replayed request: %r" % answered)

    # Trace one replayed request.
    traced = config["replayable_ids"][0]
    driver.get(base + "/trace")
    driver.find_element(By.ID, "trace-q").send_keys(traced)
    driver.find_element(By.ID, "trace-submit").click()
    WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.ID, "timeline-" + traced))
    timeline = driver.find_element(By.ID, "timeline-" + traced).text
    check("replayed" in timeline and "alice" in timeline, "the timeline shows the replay by alice")
    check(answered.get(traced, "?") in driver.find_element(By.ID, "results-" + traced).text, "the trace shows the result's status")
    remember("trace")
    shot("console-trace")

    # Every stream once more, and the canary scan over everything the browser received.
    fetch("/events/overview?once=1")
    for where, text in seen:
        for secret, forms in canary_variants.items():
            if any(form in text for form in forms):
                check(False, "a canary secret appeared in %s" % where)
                break
    check(len(seen) >= 12, "pages and streams scanned: %d" % len(seen))
finally:
    driver.quit()

print("console browser test: %d check(s) failed; %d pages and streams scanned for %d canaries"
      % (len(failures), len(seen), len(canary_variants)))
sys.exit(1 if failures else 0)
