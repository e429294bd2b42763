/** An example offline claim: the template's example row, and the shape tests and the tour start from. */
import type { OfflineClaim } from '../schemas.js';

/** A complete, valid claim for `storeId`. */
export function exampleClaim(storeId: string): OfflineClaim {
  return {
    customer: { email: 'alice@example.com', phoneNumber: '+1 555 0100' },
    item: {
      name: 'Espresso machine, stainless',
      price: 249.99,
      sku: 'ESP-200',
      sourceProductId: 'prod_200',
      details: 'Pump stopped working after 3 months',
      images: ['https://example.com/claims/espresso-1.jpg', 'https://example.com/claims/espresso-2.jpg'],
    },
    warranty: { dateOfPurchase: '2024-05-01T10:00:00Z', warrantyPeriod: 'P1Y', receiptRequired: true },
    shippingAddress: {
      firstName: 'Alice',
      lastName: 'Example',
      address1: '1 Main St',
      address2: 'Apt 4',
      city: 'Springfield',
      state: 'Illinois',
      stateAbr: 'IL',
      zip: '62701',
      country: 'United States',
      countryAbr: 'US',
    },
    storeId,
    signature: '',
    salesChannel: 'IN_STORE',
    claimCategory: 'WARRANTY',
    issueType: 'DEFECTIVE_ITEM',
    resolution: 'RESHIP',
    claimFiledFrom: 'EXTERNAL',
    options: { fromValet: false, requireCustomerSignature: false },
  };
}
