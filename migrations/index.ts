import { InitialSchema1763800000000 } from './1763800000000-InitialSchema.js';
import { AccessControl1763900000000 } from './1763900000000-AccessControl.js';
import { TestResults1764000000000 } from './1764000000000-TestResults.js';
import { IngestQueue1764100000000 } from './1764100000000-IngestQueue.js';
import { PendingIngest1764200000000 } from './1764200000000-PendingIngest.js';
import { MailAndAccounts1764400000000 } from './1764400000000-MailAndAccounts.js';
import { TwoFactor1764500000000 } from './1764500000000-TwoFactor.js';
import { ResultsWritePath1764600000000 } from './1764600000000-ResultsWritePath.js';
import { IngestQueuePayloadJson1764610000000 } from './1764610000000-IngestQueuePayloadJson.js';
import { IngestQueuePayloadText1764620000000 } from './1764620000000-IngestQueuePayloadText.js';
import { ResultIdBlocks1764630000000 } from './1764630000000-ResultIdBlocks.js';
import { ResultsWithoutIdIndex1764640000000 } from './1764640000000-ResultsWithoutIdIndex.js';
import { DirectoryIdentity1764650000000 } from './1764650000000-DirectoryIdentity.js';
import { FailureKey1764660000000 } from './1764660000000-FailureKey.js';
import { TestCasesOrder1795698000000 } from './1795698000000-TestCasesOrder.js';
import { TokensValidAfter1795708800000 } from './1795708800000-TokensValidAfter.js';
import { FailureKeyIdentifiers1795712400000 } from './1795712400000-FailureKeyIdentifiers.js';
import { Attempts1795719600000 } from './1795719600000-Attempts.js';
import { Streams1795720200000 } from './1795720200000-Streams.js';
import { OutcomeIndexes1795723200000 } from './1795723200000-OutcomeIndexes.js';
import { RunNewFailures1795726800000 } from './1795726800000-RunNewFailures.js';
import { TestHealth1795770000000 } from './1795770000000-TestHealth.js';
import { FailureSignatures1795780000000 } from './1795780000000-FailureSignatures.js';
import { RunGate1795790000000 } from './1795790000000-RunGate.js';
import { Notifications1795800000000 } from './1795800000000-Notifications.js';
import { Retention1795810000000 } from './1795810000000-Retention.js';
import { SignatureRecount1795820000000 } from './1795820000000-SignatureRecount.js';
import { PendingNotifications1795830000000 } from './1795830000000-PendingNotifications.js';
import { TestHealthWithoutForeignKey1795840000000 } from './1795840000000-TestHealthWithoutForeignKey.js';
import { TestCaseIdentityFirst1795850000000 } from './1795850000000-TestCaseIdentityFirst.js';
import { TestHealthLastFailedByDay1795860000000 } from './1795860000000-TestHealthLastFailedByDay.js';
import { RunPurgeStarted1795870000000 } from './1795870000000-RunPurgeStarted.js';
import { TestCasesWithoutProjectForeignKey1795880000000 } from './1795880000000-TestCasesWithoutProjectForeignKey.js';
import { TestHealthSecondRunHot1795890000000 } from './1795890000000-TestHealthSecondRunHot.js';
import { TestHealthChanges1795900000000 } from './1795900000000-TestHealthChanges.js';

/** Applied in this order at boot (under an advisory lock). Add each new migration here. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  AccessControl1763900000000,
  TestResults1764000000000,
  IngestQueue1764100000000,
  PendingIngest1764200000000,
  MailAndAccounts1764400000000,
  TwoFactor1764500000000,
  ResultsWritePath1764600000000,
  IngestQueuePayloadJson1764610000000,
  IngestQueuePayloadText1764620000000,
  ResultIdBlocks1764630000000,
  ResultsWithoutIdIndex1764640000000,
  DirectoryIdentity1764650000000,
  FailureKey1764660000000,
  TestCasesOrder1795698000000,
  TokensValidAfter1795708800000,
  FailureKeyIdentifiers1795712400000,
  Attempts1795719600000,
  Streams1795720200000,
  OutcomeIndexes1795723200000,
  RunNewFailures1795726800000,
  TestHealth1795770000000,
  FailureSignatures1795780000000,
  RunGate1795790000000,
  Notifications1795800000000,
  Retention1795810000000,
  SignatureRecount1795820000000,
  PendingNotifications1795830000000,
  TestHealthWithoutForeignKey1795840000000,
  TestCaseIdentityFirst1795850000000,
  TestHealthLastFailedByDay1795860000000,
  RunPurgeStarted1795870000000,
  TestCasesWithoutProjectForeignKey1795880000000,
  TestHealthSecondRunHot1795890000000,
  TestHealthChanges1795900000000,
];
