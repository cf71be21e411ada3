// The proxy's doctor, run in our child over IPC: one pending call per id, each
// ending with the child's report, a timeout, or the child's exit.

export interface DoctorResult {
  ok: boolean;
  report: string;
}

const DOCTOR_TIMEOUT_MS = 60_000;

/** Why this window cannot run the diagnosis now. */
export function doctorUnavailable(attached: boolean): Error {
  return new Error(
    attached
      ? 'This window uses the proxy another VS Code window started. Run the diagnosis in that window, or run `loopgate doctor` in a terminal.'
      : 'The Loopgate proxy is not running. Start it (Loopgate: Start Proxy), then run the diagnosis again.',
  );
}

export class DoctorCalls {
  private nextId = 1;
  private readonly waiters = new Map<number, (r: DoctorResult) => void>();

  /** Starts a call (`send` passes its id to the child); resolves with the child's markdown report. */
  call(send: (id: number) => void): Promise<DoctorResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        reject(new Error(`The diagnosis did not finish within ${DOCTOR_TIMEOUT_MS / 1000} s.`));
      }, DOCTOR_TIMEOUT_MS);
      this.waiters.set(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      send(id);
    });
  }

  /** The child's `doctor-result` for call `id`. */
  answer(id: number, result: DoctorResult): void {
    this.waiters.get(id)?.(result);
    this.waiters.delete(id);
  }

  /** Our child exited: no answer will come, so every pending call ends now and says why. */
  childExited(): void {
    for (const [id, waiter] of this.waiters) {
      waiter({ ok: false, report: '# Loopgate diagnosis\n\nThe proxy exited before the diagnosis finished.' });
      this.waiters.delete(id);
    }
  }
}
