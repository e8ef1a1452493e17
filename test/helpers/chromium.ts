import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (installed by scripts/setup-chromium.sh), started headless the way this
 * machine's closed network needs: no background networking, no component updates, no sync.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.PERFMINE_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
