// Reads one JSON object per line on stdin, {secret, headers, body}, verifies
// it with the standardwebhooks package and prints one line per object: "ok"
// or "fail <reason>". An optional "now" (Unix seconds) sets the clock the
// timestamp window is checked against, for published vectors.
import { Webhook } from "standardwebhooks";
import readline from "node:readline";

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  const { secret, headers, body, now } = JSON.parse(line);
  const realNow = Date.now;
  if (now) Date.now = () => now * 1000;
  try {
    new Webhook(secret).verify(body, headers);
    console.log("ok");
  } catch (e) {
    console.log("fail " + String(e && e.message).replace(/\s+/g, " "));
  } finally {
    Date.now = realNow;
  }
}
