// The viewer pages in headless Chromium (Debian's chromium, driven by playwright-core):
// pages written by `ncpkit simulate --html` and `ncpkit view` load without console errors,
// seeking to a time puts each body where the trajectory CSV says (read back from the page),
// the slider and play button move the frame, contact markers show, and a screenshot is not
// blank.
//   node viewer_test.mjs NCPKIT_PROGRAM SCENE_DIR WORK_DIR   (CHROMIUM=/path overrides)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [program, sceneDir, work] = process.argv.slice(2);
if (!program || !sceneDir || !work) {
  console.error("usage: node viewer_test.mjs NCPKIT_PROGRAM SCENE_DIR WORK_DIR");
  process.exit(2);
}
mkdirSync(work, { recursive: true });
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(executablePath)) {
  console.error(`no Chromium at ${executablePath} (Debian package chromium; tools/install-deps.sh)`);
  process.exit(1);
}

let failures = 0;
function check(condition, what) {
  if (condition) return;
  ++failures;
  console.error(`FAILED: ${what}`);
}

function ncpkit(...args) {
  return execFileSync(program, args, { encoding: "utf8" });
}

// A trajectory CSV as {name: [values]} (the scenes used here have no quoted names).
function readCsv(path) {
  const [header, ...rows] = readFileSync(path, "utf8").trim().split("\n");
  const names = header.split(",");
  const columns = Object.fromEntries(names.map((n) => [n, []]));
  for (const row of rows) {
    row.split(",").forEach((cell, c) => columns[names[c]].push(cell === "" ? NaN : Number(cell)));
  }
  return columns;
}

function close(a, b) {
  return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(a), Math.abs(b));
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--ignore-gpu-blocklist"],
});

// Opens a page; returns it with the console errors it reports.
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 960, height: 640 } });
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => window.ncpkitViewer && window.ncpkitViewer.ready,
                             null, { timeout: 30000 });
  return { page, errors };
}

// Seeks to several times and compares every moving body's pose with the CSV's row.
async function checkPoses(page, csv, bodies, label) {
  const times = csv.t;
  const probes = [0, 0.37 * times[times.length - 1], 0.5 * times[times.length - 1],
                  times[times.length - 1]];
  for (const probe of probes) {
    const t = await page.evaluate((x) => window.ncpkitViewer.seek(x), probe);
    const row = times.findIndex((x) => close(x, t));
    check(row >= 0, `${label}: seek(${probe}) went to t = ${t}, a time of the CSV`);
    if (row < 0) continue;
    for (const body of bodies) {
      const position = await page.evaluate((b) => window.ncpkitViewer.bodyPosition(b), body);
      const quaternion = await page.evaluate((b) => window.ncpkitViewer.bodyQuaternion(b), body);
      const expected = ["x", "y", "z"].map((q) => csv[`${body}.${q}`][row]);
      const expectedQ = ["qw", "qx", "qy", "qz"].map((q) => csv[`${body}.${q}`][row]);
      check(position.every((v, k) => close(v, expected[k])),
            `${label}: ${body} at t = ${t}: page ${position}, CSV ${expected}`);
      check(quaternion.every((v, k) => close(v, expectedQ[k])),
            `${label}: ${body} orientation at t = ${t}: page ${quaternion}, CSV ${expectedQ}`);
    }
  }
}

async function checkPage(file, csvFile, bodies, label, screenshot) {
  const { page, errors } = await open(file);
  const csv = readCsv(csvFile);
  const frames = await page.evaluate(() => window.ncpkitViewer.frames);
  check(frames === csv.t.length, `${label}: ${frames} frames, the CSV has ${csv.t.length} rows`);
  await checkPoses(page, csv, bodies, label);
  // The slider and the play button move the frame; markers show while in contact.
  await page.locator("#time").fill("20");
  check((await page.evaluate(() => window.ncpkitViewer.frame())) === 20, `${label}: slider`);
  check((await page.evaluate(() => window.ncpkitViewer.markers())) > 0,
        `${label}: contact markers at frame 20`);
  const label20 = await page.locator("#label").textContent();
  check(label20.includes("step 21 of"), `${label}: the time label says step 21 (${label20})`);
  const stats = await page.locator("#stats").textContent();
  check(/iterations, residual/.test(stats), `${label}: solver statistics shown (${stats})`);
  await page.locator("#play").click();
  const advanced = await page.waitForFunction(() => window.ncpkitViewer.frame() > 20, null,
                                              { timeout: 10000 }).then(() => true, () => false);
  check(advanced, `${label}: play advances the frame`);
  await page.evaluate(() => window.ncpkitViewer.pause());
  // Not blank: the shapes are drawn.
  const pixels = await page.evaluate(() => window.ncpkitViewer.nonBlankPixels());
  check(pixels > 0.01 * 960 * 640, `${label}: ${pixels} drawn pixels`);
  await page.screenshot({ path: screenshot });
  check(statSync(screenshot).size > 10000, `${label}: screenshot ${screenshot} has content`);
  check(errors.length === 0, `${label}: console errors: ${errors.join(" | ")}`);
  await page.close();
}

try {
  const topple = join(sceneDir, "toppling_cube.json");
  ncpkit("simulate", topple, "--duration", "1.5", "--quiet", "--out", join(work, "topple.csv"),
         "--html", join(work, "topple.html"));
  await checkPage(join(work, "topple.html"), join(work, "topple.csv"), ["cube"],
                  "simulate --html", join(work, "topple.png"));
  ncpkit("view", topple, join(work, "topple.csv"), "--html", join(work, "topple_view.html"));
  await checkPage(join(work, "topple_view.html"), join(work, "topple.csv"), ["cube"],
                  "view", join(work, "topple_view.png"));
  const gripper = join(sceneDir, "gripper_sphere.json");
  ncpkit("simulate", gripper, "--duration", "0.3", "--quiet", "--out", join(work, "gripper.csv"),
         "--html", join(work, "gripper.html"));
  await checkPage(join(work, "gripper.html"), join(work, "gripper.csv"),
                  ["sphere", "left_finger", "right_finger"], "quasistatic simulate --html",
                  join(work, "gripper.png"));
} catch (e) {
  ++failures;
  console.error(`FAILED: ${e.stack || e}`);
} finally {
  await browser.close();
}
if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("viewer test passed: 3 pages, poses equal to the CSV at 4 times each, screenshots in " +
            work);
