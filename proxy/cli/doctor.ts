import { EXIT, type Command } from './command.js';
import { runDoctor, formatDoctorTable } from '../doctor.js';
import { withUpstream } from './upstream-config.js';

export const doctorCommand: Command = {
  name: 'doctor',
  summary: "Walk the spec's first-use order against the upstream and explain each failure",
  usage: `Usage: loopgate doctor [--upstream URL] [--key-stdin] [--allow-http] [--json]

Checks, in the spec's recommended order: the URL form, the key, GET /models,
minimal /responses and /chat/completions (stream false, then true), and
{site_url}/v1/messages when the key's group has a Claude model.
Upstream from --upstream or LOOPGATE_UPSTREAM; key from LOOPGATE_API_KEY or --key-stdin.
With neither, it checks the embedded simulator.

Exit codes: 0 every step passed (warnings allowed), 1 a step failed, 2 bad usage.`,
  run: (argv, io) =>
    withUpstream(argv, io, async (cfg, flags) => {
      const report = await runDoctor({ upstream: cfg.upstream, key: cfg.key, allowHttp: flags['allow-http'] });
      io.out(flags.json ? JSON.stringify(report, null, 2) : formatDoctorTable(report));
      return report.ok ? EXIT.ok : EXIT.failed;
    }, { checkKey: false }),
};
