"""The device's HTTPS side: the ASA-style management API, how connections are accepted (caps,
TLS, HTTP/1.1 or HTTP/2) and the throwaway CA its certificates come from.
"""
