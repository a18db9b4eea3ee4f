"""The web console in headless Chromium (Debian's chromium and chromium-driver, through
Selenium): each page renders the real cluster state, a topic config edited in the console is
set, and a record produced in the console is written where the console says. Screenshots of
every page go to SHOT_DIR.

usage: console_check.py HTTP_BASE SHOT_DIR TOPIC GROUP
prints "produced PARTITION OFFSET" for the shell to read back with kcat.
"""
import json
import os
import sys
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

base, shots, topic, group = sys.argv[1:5]
os.makedirs(shots, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    driver.save_screenshot(os.path.join(shots, "failure.png"))
    driver.quit()
    sys.exit(1)


opts = webdriver.ChromeOptions()
opts.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1366,768", "--no-first-run"):
    opts.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
# Tables are redrawn as answers arrive: an element read while it is replaced is read again.
wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])


def page(view):
    driver.get(f"{base}/#{view}")
    try:
        wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-loaded") == view)
    except Exception:
        fail(f"the {view} page did not load")
    err = driver.find_element(By.ID, "error")
    if err.is_displayed():
        fail(f"the {view} page shows an error: {err.text}")


def rows(table_id):
    return driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")


def cells(row):
    return [c.text for c in row.find_elements(By.TAG_NAME, "td")]


def rest(path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return json.loads(r.read())


cluster = rest("/v3/clusters")["data"][0]["cluster_id"]

# Brokers: the three, one controller, all up.
page("brokers")
brokers = [cells(r) for r in rows("brokers-table")]
if sorted(b[0] for b in brokers) != ["1", "2", "3"] or [b[4] for b in brokers].count("yes") != 1 \
        or any(b[3] != "UP" for b in brokers):
    fail(f"brokers page: {brokers}")
if cluster not in driver.find_element(By.ID, "cluster").text:
    fail("the header does not name the cluster")
driver.save_screenshot(os.path.join(shots, "brokers.png"))

# Topics, and one topic's partitions and configs.
page("topics")
row = [r for r in rows("topics-table") if cells(r)[0] == topic]
if not row or cells(row[0])[1:3] != ["3", "3"]:
    fail(f"topics page: {[cells(r) for r in rows('topics-table')]}")
row[0].click()
wait.until(EC.text_to_be_present_in_element((By.ID, "topic-title"), topic))
wait.until(lambda d: len(rows("partitions-table")) == 3)
parts = [cells(r) for r in rows("partitions-table")]
for p in parts:
    if p[1] not in ("1", "2", "3") or sorted(p[2].split(", ")) != ["1", "2", "3"]:
        fail(f"partitions of {topic}: {parts}")
inp = driver.find_element(By.CSS_SELECTOR, '#configs-table input[data-config="retention.ms"]')
inp.clear()
inp.send_keys("7200000")
inp.find_element(By.XPATH, "../../td[4]/button").click()
wait.until(lambda d: rest(f"/v3/clusters/{cluster}/topics/{topic}/configs/retention.ms")["value"] == "7200000")
driver.save_screenshot(os.path.join(shots, "topic.png"))

# Groups: the group, its lag.
page("groups")
row = [r for r in rows("groups-table") if cells(r)[0] == group]
if not row:
    fail(f"groups page: {[cells(r) for r in rows('groups-table')]}")
row[0].click()
wait.until(lambda d: len(rows("lags-table")) > 0)
lags = [cells(r) for r in rows("lags-table")]
if not any(l[0] == topic and l[1] == "0" and l[2] == "1" and int(l[4]) == int(l[3]) - 1 for l in lags):
    fail(f"lags of {group}: {lags}")
driver.save_screenshot(os.path.join(shots, "group.png"))

# Records: partition 0 from offset 0, with the key and header produced by the test.
page("records")
form = driver.find_element(By.ID, "browse")
Select(form.find_element(By.NAME, "topic")).select_by_value(topic)
form.find_element(By.NAME, "offset").send_keys("0")
form.find_element(By.CSS_SELECTOR, "button").click()
wait.until(lambda d: len(rows("records-table")) > 0)
recs = [cells(r) for r in rows("records-table")]
if recs[0][0] != "0" or recs[0][2] != "k0" or recs[0][3] != "h=v0" or recs[0][4] != "v0":
    fail(f"records: {recs[:3]}")
form.find_element(By.NAME, "hex").click()
form.find_element(By.CSS_SELECTOR, "button").click()
wait.until(lambda d: cells(rows("records-table")[0])[4] == "76 30")
driver.save_screenshot(os.path.join(shots, "records.png"))

# Produce a record.
page("produce")
form = driver.find_element(By.ID, "produce-form")
Select(form.find_element(By.NAME, "topic")).select_by_value(topic)
form.find_element(By.NAME, "partition").send_keys("1")
form.find_element(By.NAME, "key").send_keys("console-key")
form.find_element(By.NAME, "value").send_keys("from the console")
form.find_element(By.CSS_SELECTOR, "button").click()
wait.until(lambda d: "offset" in d.find_element(By.ID, "produce-result").text)
text = driver.find_element(By.ID, "produce-result").text
driver.save_screenshot(os.path.join(shots, "produce.png"))
driver.quit()
words = text.split()
print(f"produced {words[words.index('partition') + 1]} {words[words.index('offset') + 1]}")
