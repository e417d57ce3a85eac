// An audit entry is found by the request that wrote it (auditTrail: requestId).
CREATE INDEX audit_entry_request_id IF NOT EXISTS FOR (entry:AuditEntry) ON (entry.request_id)
