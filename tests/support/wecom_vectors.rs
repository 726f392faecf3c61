// Tencent's published WeCom callback sample: the app's keys and the two signed, encrypted
// requests it verifies. Source: Tencent's weworkapi callback sample, callback/Sample.py
// (github.com/sbzhu/weworkapi_python, commit 27220fbe9d5251d46101e33751568eae9f413666).
// Included by the unit tests of `src/wecom` (with `include!`, hence plain comments), the
// integration tests and the fuzz targets, so all of them check the same published bytes.

pub const TOKEN: &str = "hJqcu3uJ9Tn2gXPmxx2w9kkCkCE2EPYo";
pub const AES_KEY: &str = "6qkdMrq68nTKduznJYO1A37W2oEgpkMUvkttRToqhUt";
pub const CORP_ID: &str = "ww1436e0e65a779aee";

/// URL verification (GET): signature, timestamp, nonce and the encrypted echostr.
pub const URL_SIG: &str = "012bc692d0a58dd4b10f8dfe5c4ac00ae211ebeb";
pub const URL_TS: &str = "1476416373";
pub const URL_NONCE: &str = "47744683";
pub const URL_ECHOSTR: &str =
    "fsi1xnbH4yQh0+PJxcOdhhK6TDXkjMyhEPA7xB2TGz6b+g7xyAbEkRxN/3cNXW9qdqjnoVzEtpbhnFyq6SVHyA==";

/// A message (POST): signature, timestamp, nonce and the `Encrypt` field.
pub const MSG_SIG: &str = "0c3914025cb4b4d68103f6bfc8db550f79dcf48e";
pub const MSG_TS: &str = "1476422779";
pub const MSG_NONCE: &str = "1597212914";
pub const MSG_ENCRYPT: &str = "Kl7kjoSf6DMD1zh7rtrHjFaDapSCkaOnwu3bqLc5tAybhhMl9pFeK8NslNPVdMwmBQTNoW4mY7AIjeLvEl3NyeTkAgGzBhzTtRLNshw2AEew+kkYcD+Fq72Kt00fT0WnN87hGrW8SqGc+NcT3mu87Ha3dz1pSDi6GaUA6A0sqfde0VJPQbZ9U+3JWcoD4Z5jaU0y9GSh010wsHF8KZD24YhmZH4ch4Ka7ilEbjbfvhKkNL65HHL0J6EYJIZUC2pFrdkJ7MhmEbU2qARR4iQHE7wy24qy0cRX3Mfp6iELcDNfSsPGjUQVDGxQDCWjayJOpcwocugux082f49HKYg84EpHSGXAyh+/oxwaWbvL6aSDPOYuPDGOCI8jmnKiypE+";
