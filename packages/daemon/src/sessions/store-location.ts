/**
 * Where the store is (SQLite file or PostgreSQL URL) and why it could not be opened, for the
 * start-up error messages of `serve` and the CLI: no driver is loaded by this module.
 */
export {
  redactStoreUrl,
  STORE_URL_ENV,
  storeLocation,
  StoreOpenError,
  StoreUrlError,
  type StoreLocation,
} from "../store/store-location.js";
