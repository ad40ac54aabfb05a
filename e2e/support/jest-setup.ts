// e2e suites start real processes: give each test a minute (jest 29 has no per-project testTimeout).
jest.setTimeout(60_000);
