import type { Browser, Page } from 'puppeteer-core';
import { ensureBinary } from './binaries';

/**
 * Debian's headless Chromium through puppeteer-core, installed with apt-get when missing (a
 * suite that needs it fails rather than skips). `args` are added to the defaults (no sandbox:
 * tests run as root; /dev/shm is small in containers).
 */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  const executablePath = await ensureBinary('chromium', 'chromium');
  // Loaded on first use: most suites that import @orch/testing never start a browser.
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', ...args] });
}

/**
 * page.goto that loads again once when Chromium reports ERR_NETWORK_CHANGED: Chromium aborts
 * navigations in flight when an address is added to an interface, which the network-proxy
 * (service cluster IPs on loopback) and other tests on the machine do at any time.
 */
export async function navigate(page: Page, url: string): Promise<void> {
  try {
    await page.goto(url);
  } catch (err) {
    if (!String((err as Error).message).includes('ERR_NETWORK_CHANGED')) throw err;
    await page.goto(url);
  }
}
