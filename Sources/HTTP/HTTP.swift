import CCurl
import CMicroHTTPD
let probeCurl: CURLcode = { let h = curl_easy_init(); defer { curl_easy_cleanup(h) }; return provisioner_curl_easy_setopt_long(h, CURLOPT_TIMEOUT_MS, 5) }()
func probeMHD() -> String { String(cString: MHD_get_version()) }
