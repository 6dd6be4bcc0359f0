// Renders media/icon.svg to the 128×128 media/icon.png the marketplace shows, with Debian's
// Chromium (the one the UI tests use). Run after changing the SVG: node scripts/render-icon.mjs
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const media = join(dirname(fileURLToPath(import.meta.url)), "..", "media");
const svg = readFileSync(join(media, "icon.svg"), "utf8");
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu"],
});
const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
await page.setContent(
  `<body style="margin:0;background:transparent">${svg}</body>`,
);
await page.screenshot({ path: join(media, "icon.png"), omitBackground: true });
await browser.close();
