// Every feature's part of an account's data, in the order erasure runs them: the features first,
// the account (keys, projects) last, since the others act on its projects' ids.
import { accountsData } from '../accounts/account-data.ts';
import { agentsData } from '../agents/account-data.ts';
import { conciergeData } from '../concierge/account-data.ts';
import { consoleData } from '../console/account-data.ts';
import { crmData } from '../crm/account-data.ts';
import { mailData, sendingDomainNamesOf } from '../mail/account-data.ts';
import { mcpData } from '../mcp/account-data.ts';
import { mediaData } from '../media/account-data.ts';
import type { AccountDataPart } from '../platform/account-data.ts';
import type { Db } from '../platform/db.ts';
import type { SecretBox } from '../platform/secrets.ts';
import { salesData } from '../sales/account-data.ts';
import { webhooksData } from '../webhooks/account-data.ts';

export function accountDataParts(db: Db, vatRate: string, secrets: SecretBox | undefined): AccountDataPart[] {
  return [
    // sales keeps opt-outs per sending domain: it runs before mail erases the domains
    salesData(sendingDomainNamesOf, secrets),
    conciergeData,
    crmData,
    webhooksData,
    mailData,
    agentsData,
    mcpData,
    mediaData,
    consoleData(db, vatRate),
    accountsData,
  ];
}
