// Bundles the web client into the directory named on the command line (default dist/):
// index.html, app.css, app.js and live-worker.js, the files `tabula serve` embeds (src/server/web.rs).
// tests/web.rs builds into a scratch directory and compares with the committed dist/.
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const out = process.argv[2] ?? "dist";
await mkdir(out, { recursive: true });
await build({
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  outfile: join(out, "app.js"),
  logLevel: "warning",
});
// The shared worker every tab's live updates go through (src/live.ts).
await build({
  entryPoints: ["src/live-worker.ts"],
  bundle: true,
  format: "iife",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  outfile: join(out, "live-worker.js"),
  logLevel: "warning",
});
await copyFile("src/index.html", join(out, "index.html"));
await copyFile("src/app.css", join(out, "app.css"));
