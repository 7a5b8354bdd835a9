/**
 * When a run object sends the notifications its outbox owes (outbox.ts): in the background,
 * off the path of the run's own progress. A notification made while the run's execution is
 * under way (Lua computing, the engine between two effects, in the same thread as the
 * delivery's fetch) waits until that execution settles (the run suspends or ends) or
 * SEND_HOLD_MS pass, whichever comes first, so that a long computation does not hold it
 * back; one made while the run is at rest leaves at once. One sending loop at a time: what
 * is owed while it sends is sent by its next turn. The alarm (NOTIFY_BACKSTOP_MS) is the
 * backstop when the object dies first, and retries what failed.
 */

/** The longest a notification waits for the run's execution to settle before it is sent anyway. */
export const SEND_HOLD_MS = 25;

/** Runs a run object's deliveries in the background, paced by its execution. */
export class OutboxSender {
  private sending: Promise<void> | null = null;
  private again = false;
  private held: ReturnType<typeof setTimeout> | null = null;

  /**
   * `send` delivers what is owed now (it never throws: what fails stays owed); `executing`
   * says whether the run's execution is under way in this object.
   */
  constructor(
    private readonly send: () => Promise<void>,
    private readonly executing: () => boolean,
  ) {}

  /** Sends what the outbox owes: at once when the run is at rest, else once it settles (settled()) or SEND_HOLD_MS pass. */
  soon(): void {
    if (!this.executing()) return this.start();
    this.held ??= setTimeout(() => this.release(), SEND_HOLD_MS);
  }

  /** The run's execution has settled (it suspended, or ended): what was held back is sent now. */
  settled(): void {
    if (this.held !== null) this.release();
  }

  private release(): void {
    if (this.held !== null) clearTimeout(this.held);
    this.held = null;
    // A turn of the event loop later: the answer to the request that settled the run (its view) goes out first.
    setTimeout(() => this.start(), 0);
  }

  private start(): void {
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = (async () => {
      do {
        this.again = false;
        await this.send().catch(() => undefined);
      } while (this.again);
    })().finally(() => (this.sending = null));
  }
}
