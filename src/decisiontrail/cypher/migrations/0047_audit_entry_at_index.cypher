// The audit trail is read newest first and filtered by time (auditTrail: since, until).
CREATE INDEX audit_entry_at IF NOT EXISTS FOR (entry:AuditEntry) ON (entry.at)
