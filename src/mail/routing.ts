// Where an inbound message and an opt-out link go. Each feature that sends mail (Sales'
// campaigns, the concierge's requests for quotes) registers here, as it is made, which answers
// are its own and which opt-out tokens it signs; the inbound listener and the unsubscribe pages
// then reach it through this one table, without knowing the feature.
import { type InboundMail, InboundRejected } from './inbound.ts';

export interface InboundRoute {
  /** Whether a message answers this feature's mail; the route without it takes what no other claims. */
  owns?(mail: InboundMail): boolean;
  /** Stores the message (the listener answers 250 once it resolves), or refuses it with an `InboundRejected`. */
  onMail(mail: InboundMail): Promise<void>;
}

/** Who a genuine opt-out link stands for, and what opts them out. */
export interface OptingOut {
  email: string;
  /** The sender they stop hearing from. */
  fromName: string;
  fromEmail: string;
  /** Opts the address out; a second time changes nothing. */
  optOut(): Promise<void>;
}

/** Says who an opt-out token stands for, or null when the token is not genuine. */
export type OptOutOf = (token: string) => Promise<OptingOut | null>;

export class MailRouting {
  readonly #claiming: InboundRoute[] = [];
  #rest: InboundRoute | undefined;
  readonly #optOuts = new Map<string, OptOutOf>();

  /** Registers a feature's inbound mail; one route at most may leave out `owns`. */
  inbound(route: InboundRoute): void {
    if (route.owns) this.#claiming.push(route);
    else if (this.#rest) throw new Error('only one inbound route may take the mail no other claims');
    else this.#rest = route;
  }

  /** Registers the opt-out tokens that start with `prefix` (`rcp_`, `cq_`). */
  optOuts(prefix: string, optOutOf: OptOutOf): void {
    for (const other of this.#optOuts.keys()) {
      if (other.startsWith(prefix) || prefix.startsWith(other)) {
        throw new Error(`opt-out tokens starting ${prefix} would overlap those starting ${other}`);
      }
    }
    this.#optOuts.set(prefix, optOutOf);
  }

  /** Hands a message to the route that claims it, else to the one that takes the rest. */
  onMail(mail: InboundMail): Promise<void> {
    const route = this.#claiming.find((r) => r.owns?.(mail)) ?? this.#rest;
    if (!route) return Promise.reject(new InboundRejected(550, '5.1.1 no mail of ours is answered here'));
    return route.onMail(mail);
  }

  /** Who an opt-out token stands for, asked of the feature whose prefix it has; null when none. */
  async optOutOf(token: string): Promise<OptingOut | null> {
    for (const [prefix, optOutOf] of this.#optOuts) if (token.startsWith(prefix)) return optOutOf(token);
    return null;
  }
}
